// benchmarks/maxstep/peer_node.mjs: the WebAssembly peers of the max-step benchmark, run under node by
// mx_node.c (the protocol is described there): MuJoCo 3.x (npm mujoco-js, the official WebAssembly
// module), PhysX 4.1.1 (npm @cocos/physx, single precision) and Rapier (npm @dimforge/rapier3d-compat,
// single precision). Their packages are pinned in package.json beside this file and installed by
// scripts/install-deps.sh --bench. Each engine is loaded once; one that fails to load is reported in the
// hello line with the reason, and its rows are "not run". Stability is comparable with the native
// engines; wall time is not (WebAssembly and the JavaScript bindings cost extra): README.md.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
// stdout carries the protocol only: whatever the engines print (MuJoCo's warnings) goes to stderr
const toStderr = (...a) => process.stderr.write(a.join(' ') + '\n');
console.log = toStderr;
console.info = toStderr;
console.warn = toStderr;
const require = createRequire(import.meta.url);

// ---------------------------------------------------------------------------------------------------
// loading (each engine on its own: a missing package only disables its rows)

async function loadMujoco() {
  const mod = await import('mujoco-js');
  // its instability warnings are dropped: a non-finite state is read from the state itself
  const mj = await mod.default({ print: () => {}, printErr: () => {} });
  mj.FS.mkdir('/mx');
  return { mj, version: 'MuJoCo ' + mj.mj_versionString() + ' (npm mujoco-js ' + pkgVersion('mujoco-js') + ')' };
}

async function loadPhysx() {
  // under node the loader must be handed the .wasm bytes: it would fetch() them in a browser
  const dir = path.join(here, 'node_modules', '@cocos', 'physx', 'builds');
  const factory = require(path.join(dir, 'physx.release.wasm.js'));
  const wasmBinary = fs.readFileSync(path.join(dir, 'physx.release.wasm.wasm'));
  const P = await new Promise((resolve) => {
    const M = factory({ wasmBinary, print: toStderr, printErr: toStderr, onRuntimeInitialized() { resolve(M); } });
  });
  const v = P.PX_PHYSICS_VERSION;
  const foundation = P.PxCreateFoundation(v, new P.PxDefaultAllocator(), new P.PxDefaultErrorCallback());
  // the bounce threshold (PxSceneDesc::bounceThresholdVelocity, not exposed by these bindings) defaults to
  // 0.2 x the tolerance scale's speed: a speed of 1e-6 m/s makes it 2e-7 m/s, so every impact restitutes
  const scale = new P.PxTolerancesScale();
  scale.speed = 1e-6;
  const physics = P.PxCreatePhysics(v, foundation, scale, false, null);
  P.PxInitExtensions(physics, null);
  const version = `PhysX ${(v >> 24) & 255}.${(v >> 16) & 255}.${(v >> 8) & 255} (npm @cocos/physx ${pkgVersion('@cocos/physx')}, single precision)`;
  return { P, physics, version };
}

async function loadRapier() {
  const mod = await import('@dimforge/rapier3d-compat');
  const R = mod.default;
  await R.init();
  return { R, version: 'Rapier ' + R.version() + ' (npm @dimforge/rapier3d-compat, single precision)' };
}

function pkgVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

const engines = [null, null, null];
const fields = [];
for (const [i, load] of [loadMujoco, loadPhysx, loadRapier].entries()) {
  try {
    engines[i] = await load();
    fields.push('ok:' + engines[i].version);
  } catch (e) {
    const missing = e && ['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND', 'ENOENT'].includes(e.code);
    const msg = missing ? 'npm package not installed (scripts/install-deps.sh --bench)' : String((e && e.message) || e);
    fields.push('no:' + msg.replace(/[\t\n]/g, ' ').slice(0, 180));
  }
}
process.stdout.write('hello\tnode ' + process.version + '\t' + fields.join('\t') + '\n');

// ---------------------------------------------------------------------------------------------------
// one run: samples (t, z, vz, f) of the ball's lowest point, one per output step

function newTrace(cap) {
  return { n: 0, cap, t: new Float64Array(cap), z: new Float64Array(cap), vz: new Float64Array(cap),
    f: new Float64Array(cap), nstep: 0, nfev: -1, work: 0, wall: 0, bad: 0, capped: 0, fpeak_int: -1, dmax_int: -1 };
}

function push(tr, t, z, vz, f) {
  if (tr.n >= tr.cap) return true;
  tr.t[tr.n] = t; tr.z[tr.n] = z; tr.vz[tr.n] = vz; tr.f[tr.n] = f;
  tr.n++;
  if (tr.workCap > 0 && tr.work > tr.workCap) { tr.capped = 1; return true; }
  return false;
}

// MuJoCo 3: the solref-KD model of peer_mujoco.c, integrator by configuration; force = efc_force
// (mj_contactForce may return zeros in this build)
const MJ_INTEGRATORS = ['Euler', 'RK4', 'implicit', 'implicitfast'];
function runMujoco(E, cfg, c, h, tr) {
  const { mj } = E;
  const xml = `<mujoco model='ball'><option timestep='${h}' gravity='0 0 ${-c.g}' integrator='${MJ_INTEGRATORS[cfg]}'/>` +
    `<default><geom condim='1' solref='${-c.K / c.m} ${-c.D / c.m}' solimp='0.9999 0.9999 0.001 0.5 2'/></default>` +
    `<worldbody><geom name='floor' type='plane' size='0 0 1'/><body name='ball' pos='0 0 ${c.z0 + c.R}'><freejoint/>` +
    `<inertial pos='0 0 0' mass='${c.m}' diaginertia='${c.I} ${c.I} ${c.I}'/><geom name='ball' type='sphere' size='${c.R}'/>` +
    `</body></worldbody></mujoco>`;
  mj.FS.writeFile('/mx/ball.xml', xml);
  const m = mj.MjModel.loadFromXML('/mx/ball.xml');
  const d = new mj.MjData(m);
  const n = Math.max(1, Math.round(c.tend / h));
  push(tr, 0, d.qpos[2] - c.R, d.qvel[2], 0);
  const t0 = performance.now();
  for (let k = 1; k <= n; ++k) {
    mj.mj_step(m, d);
    let f = 0;
    if (d.ncon > 0) { const ef = d.efc_force; for (let j = 0, ne = d.nefc; j < ne; ++j) f += ef[j]; }
    const z = d.qpos[2] - c.R, vz = d.qvel[2];
    tr.work = k;
    if (!Number.isFinite(z) || !Number.isFinite(vz) || !(Math.abs(d.qacc[2]) < 1e300)) tr.bad = 1;
    if (push(tr, d.time, z, vz, f) || tr.bad) break;
  }
  tr.wall = (performance.now() - t0) / 1e3;
  tr.nstep = tr.n - 1;
  d.delete();
  m.delete();
}

// PhysX: a dynamic sphere over a static plane; restitution cr on both materials (average = cr), friction 0;
// shapes collide only once their simulation filter data is set (the bindings' filter shader reads it);
// force at an output = the contact impulse of the step / h, from the momentum change: m (dvz / h + g)
function runPhysx(E, cfg, c, h, tr) {
  const { P, physics } = E;
  const cb = P.PxSimulationEventCallback.implement({ onContactBegin() {}, onContactEnd() {}, onContactPersist() {},
    onTriggerBegin() {}, onTriggerEnd() {} });
  const sd = P.getDefaultSceneDesc(physics.getTolerancesScale(), 0, cb);
  sd.gravity = { x: 0, y: 0, z: -c.g };
  const scene = physics.createScene(sd);
  const mat = physics.createMaterial(0, 0, c.cr);
  const flags = new P.PxShapeFlags(P.PxShapeFlag.eSCENE_QUERY_SHAPE.value | P.PxShapeFlag.eSIMULATION_SHAPE.value);
  const filter = { word0: 1, word1: 1, word2: 1, word3: 0 };
  const s2 = Math.SQRT1_2; // PhysX's plane is x = 0 with normal +x: turned to z = 0, normal +z
  const ground = physics.createRigidStatic({ translation: { x: 0, y: 0, z: 0 }, rotation: { x: 0, y: -s2, z: 0, w: s2 } });
  const pshape = physics.createShape(new P.PxPlaneGeometry(), mat, false, flags);
  pshape.setSimulationFilterData(filter);
  ground.attachShape(pshape);
  scene.addActor(ground, null);
  const ball = physics.createRigidDynamic({ translation: { x: 0, y: 0, z: c.z0 + c.R }, rotation: { x: 0, y: 0, z: 0, w: 1 } });
  const bshape = physics.createShape(new P.PxSphereGeometry(c.R), mat, false, flags);
  bshape.setSimulationFilterData(filter);
  ball.attachShape(bshape);
  ball.setMass(c.m);
  ball.setMassSpaceInertiaTensor({ x: c.I, y: c.I, z: c.I });
  ball.setSleepThreshold(0);
  ball.setLinearDamping(0);
  ball.setAngularDamping(0);
  scene.addActor(ball, null);
  const n = Math.max(1, Math.round(c.tend / h));
  let vprev = 0;
  push(tr, 0, c.z0, 0, 0);
  const t0 = performance.now();
  for (let k = 1; k <= n; ++k) {
    scene.simulate(h, true);
    scene.fetchResults(true);
    const z = ball.getGlobalPose().translation.z - c.R, vz = ball.getLinearVelocity().z;
    const f = Math.max(0, c.m * ((vz - vprev) / h + c.g));
    vprev = vz;
    tr.work = k;
    if (!Number.isFinite(z) || !Number.isFinite(vz)) tr.bad = 1;
    if (push(tr, k * h, z, vz, f > 1e-3 * c.m * c.g ? f : 0) || tr.bad) break;
  }
  tr.wall = (performance.now() - t0) / 1e3;
  tr.nstep = tr.n - 1;
  scene.release();
}

// Rapier: a dynamic ball collider over a fixed 20 m thick box (top face z = 0), restitution cr on both
// (average), friction 0, no sleeping; force at an output as for PhysX
function runRapier(E, cfg, c, h, tr) {
  const { R } = E;
  const world = new R.World({ x: 0, y: 0, z: -c.g });
  world.timestep = h;
  const gb = world.createRigidBody(R.RigidBodyDesc.fixed());
  world.createCollider(R.ColliderDesc.cuboid(100, 100, 10).setTranslation(0, 0, -10).setRestitution(c.cr).setFriction(0), gb);
  const bb = world.createRigidBody(R.RigidBodyDesc.dynamic().setTranslation(0, 0, c.z0 + c.R).setCanSleep(false));
  world.createCollider(R.ColliderDesc.ball(c.R).setRestitution(c.cr).setFriction(0)
    .setMassProperties(c.m, { x: 0, y: 0, z: 0 }, { x: c.I, y: c.I, z: c.I }, { w: 1, x: 0, y: 0, z: 0 }), bb);
  const n = Math.max(1, Math.round(c.tend / h));
  let vprev = 0;
  push(tr, 0, c.z0, 0, 0);
  const t0 = performance.now();
  for (let k = 1; k <= n; ++k) {
    world.step();
    const z = bb.translation().z - c.R, vz = bb.linvel().z;
    const f = Math.max(0, c.m * ((vz - vprev) / h + c.g));
    vprev = vz;
    tr.work = k;
    if (!Number.isFinite(z) || !Number.isFinite(vz)) tr.bad = 1;
    if (push(tr, k * h, z, vz, f > 1e-3 * c.m * c.g ? f : 0) || tr.bad) break;
  }
  tr.wall = (performance.now() - t0) / 1e3;
  tr.nstep = tr.n - 1;
  world.free();
}

const runners = [runMujoco, runPhysx, runRapier];

// ---------------------------------------------------------------------------------------------------
// the request loop: one line in, one answer out

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on('line', (line) => {
  const a = line.trim().split(/\s+/);
  if (a[0] !== 'run' || a.length !== 15) {
    process.stdout.write('err bad request\n');
    return;
  }
  const [engine, cfg] = [Number(a[1]), Number(a[2])];
  const [h, tend, m, R, I, g, K, D, cr, z0] = a.slice(3, 13).map(Number);
  const workCap = Number(a[13]), cap = Number(a[14]);
  const E = engines[engine];
  if (!E) {
    process.stdout.write('err engine not loaded\n');
    return;
  }
  const tr = newTrace(cap);
  tr.workCap = workCap;
  try {
    runners[engine](E, cfg, { tend, m, R, I, g, K, D, cr, z0 }, h, tr);
  } catch (e) {
    process.stdout.write('err ' + String((e && e.message) || e).replace(/\n/g, ' ').slice(0, 200) + '\n');
    return;
  }
  const n = tr.n;
  process.stdout.write(`ok ${n} ${tr.nstep} ${tr.nfev} ${tr.work} ${tr.wall} ${tr.bad} ${tr.capped} ${tr.fpeak_int} ${tr.dmax_int}\n`);
  const out = new Float64Array(4 * n);
  out.set(tr.t.subarray(0, n), 0);
  out.set(tr.z.subarray(0, n), n);
  out.set(tr.vz.subarray(0, n), 2 * n);
  out.set(tr.f.subarray(0, n), 3 * n);
  process.stdout.write(Buffer.from(out.buffer, out.byteOffset, out.byteLength)); // same stream: in order
});
rl.on('close', () => process.exit(0));
