/* io/robot_urdf.c: a serial arm from a URDF file (http://wiki.ros.org/urdf/XML), read with
 * libxml2. The chain runs from the root link (the child of no joint) to the single leaf link, whose
 * frame is the TCP. Fixed joints are folded into the next joint's placement (or into the TCP frame),
 * and the inertia of a fixed link is added to the moving body it rides on (parallel-axis theorem).
 * Elements kelvin does not need (visual, collision, material, transmission, gazebo, dynamics,
 * safety_controller, calibration) are skipped; anything else inside <link>, <joint> or <inertial> is
 * an error, as are prismatic, floating and planar joints and mimic joints. */
#include <errno.h>
#include <limits.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/robot.h"
#include "engine/util3.h"
#include "io/slurp.h"

#define MAXELEM 256

typedef struct urdf {
  const char *path;
  char *msg;
  int cap;
  xmlNodePtr link[MAXELEM], joint[MAXELEM];
  int nlink, njoint;
} urdf;

/* "FILE:LINE: " + message into u->msg; returns KELVIN_ERR_CONFIG */
static kelvin_status fail(urdf *u, xmlNodePtr at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static kelvin_status fail(urdf *u, xmlNodePtr at, const char *fmt, ...)
{
  if (!u->msg || u->cap <= 0) return KELVIN_ERR_CONFIG;
  const int k = snprintf(u->msg, (size_t)u->cap, "%s:%ld: ", u->path, at ? xmlGetLineNo(at) : 0L);
  if (k >= 0 && k < u->cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->msg + k, (size_t)(u->cap - k), fmt, ap);
    va_end(ap);
  }
  kl_msg_oneline(u->msg);
  return KELVIN_ERR_CONFIG;
}

/* element name equals s */
static int is(xmlNodePtr n, const char *s)
{
  return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, s) == 0;
}

/* first child element called name, or NULL */
static xmlNodePtr child(xmlNodePtr n, const char *name)
{
  for (xmlNodePtr c = n->children; c; c = c->next)
    if (is(c, name)) return c;
  return NULL;
}

/* attribute value (caller frees with xmlFree) or NULL */
static char *attr(xmlNodePtr n, const char *name) { return (char *)xmlGetProp(n, (const xmlChar *)name); }

/* parse exactly cnt numbers from attribute name of n into v; a missing attribute leaves the defaults
 * when optional. what describes the element for the message. */
static kelvin_status numbers(urdf *u, xmlNodePtr n, const char *name, int cnt, double *v, int optional,
                             const char *what)
{
  char *s = attr(n, name);
  if (!s) {
    if (optional) return KELVIN_OK;
    return fail(u, n, "%s: missing attribute '%s'", what, name);
  }
  const char *p = s;
  int k = 0;
  kelvin_status st = KELVIN_OK;
  while (1) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
    if (!*p) break;
    char *end = NULL;
    errno = 0;
    const double x = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(x) || k >= cnt || (*end && *end != ' ' && *end != '\t' &&
                                                                     *end != '\n' && *end != '\r')) {
      k = -1;
      break;
    }
    v[k++] = x;
    p = end;
  }
  if (k != cnt) st = fail(u, n, "%s %s: expected %d finite number%s, got '%s'", what, name, cnt, cnt > 1 ? "s" : "", s);
  xmlFree(s);
  return st;
}

/* reject child elements outside the allowed lists: ok are read, skip are ignored */
static kelvin_status only(urdf *u, xmlNodePtr n, const char *what, const char *const *ok, const char *const *skip)
{
  for (xmlNodePtr c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    int found = 0;
    for (int i = 0; ok[i] && !found; ++i) found = is(c, ok[i]);
    for (int i = 0; skip && skip[i] && !found; ++i) found = is(c, skip[i]);
    if (!found) return fail(u, c, "%s: unknown element <%s>", what, (const char *)c->name);
  }
  return KELVIN_OK;
}

/* a link's <inertial> as mass, centre and inertia about it in link axes; zero mass if absent */
static kelvin_status inertial(urdf *u, xmlNodePtr link, const char *lname, double *m, double c[3], double I[9])
{
  *m = 0;
  memset(c, 0, 3 * sizeof *c);
  memset(I, 0, 9 * sizeof *I);
  xmlNodePtr in = child(link, "inertial");
  if (!in) return KELVIN_OK;
  char what[160];
  snprintf(what, sizeof what, "link '%s' <inertial>", lname);
  static const char *const ok[] = {"origin", "mass", "inertia", NULL};
  kelvin_status st = only(u, in, what, ok, NULL);
  if (st) return st;
  double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
  xmlNodePtr o = child(in, "origin"), ms = child(in, "mass"), it = child(in, "inertia");
  char w2[200];
  snprintf(w2, sizeof w2, "%s<origin>", what);
  if (o && ((st = numbers(u, o, "xyz", 3, xyz, 1, w2)) || (st = numbers(u, o, "rpy", 3, rpy, 1, w2)))) return st;
  if (!ms) return fail(u, in, "%s: missing <mass>", what);
  if (!it) return fail(u, in, "%s: missing <inertia>", what);
  snprintf(w2, sizeof w2, "%s<mass>", what);
  if ((st = numbers(u, ms, "value", 1, m, 0, w2))) return st;
  char sub[300];
  if (kl_robot_check_mass(*m, 1, sub, sizeof sub)) return fail(u, ms, "%s value: %s", w2, sub);
  static const char *const names[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
  double I6[6];
  snprintf(w2, sizeof w2, "%s<inertia>", what);
  for (int i = 0; i < 6; ++i)
    if ((st = numbers(u, it, names[i], 1, &I6[i], 0, w2))) return st;
  const int zero = I6[0] == 0 && I6[1] == 0 && I6[2] == 0 && I6[3] == 0 && I6[4] == 0 && I6[5] == 0;
  if (!(zero && *m == 0) && kl_robot_check_inertia(I6, sub, sizeof sub)) return fail(u, it, "%s: %s", w2, sub);
  double R[9], Ii[9];
  m3_rpy(R, rpy);
  m3_tensor6(Ii, I6);
  m3_rotate_tensor(I, R, Ii);
  memcpy(c, xyz, sizeof xyz);
  return KELVIN_OK;
}

/* add (m2, c2, I2), given in a frame placed by T in the body frame, to the body's (m, c, I) */
static void add_mass(double *m, double c[3], double I[9], const kl_xf *T, double m2, const double c2[3],
                     const double I2[9])
{
  if (m2 <= 0) return;
  double cb[3], Ib[9];
  xf_point(cb, T, c2);
  m3_rotate_tensor(Ib, T->R, I2);
  const double mt = *m + m2;
  double cn[3], d1[3], d2[3];
  for (int k = 0; k < 3; ++k) cn[k] = (*m * c[k] + m2 * cb[k]) / mt;
  v3_sub(d1, c, cn);
  v3_sub(d2, cb, cn);
  const double a1 = v3_dot(d1, d1), a2 = v3_dot(d2, d2);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k)
      I[3 * i + k] += Ib[3 * i + k] + *m * ((i == k ? a1 : 0.0) - d1[i] * d1[k]) +
                      m2 * ((i == k ? a2 : 0.0) - d2[i] * d2[k]);
  *m = mt;
  memcpy(c, cn, sizeof cn);
}

/* the link element called name, or NULL */
static xmlNodePtr find_link(urdf *u, const char *name)
{
  for (int i = 0; i < u->nlink; ++i) {
    char *s = attr(u->link[i], "name");
    const int eq = s && strcmp(s, name) == 0;
    xmlFree(s);
    if (eq) return u->link[i];
  }
  return NULL;
}

/* the <parent link> or <child link> name of a joint into buf; error if missing */
static kelvin_status joint_end(urdf *u, xmlNodePtr j, const char *jname, const char *which, char *buf, size_t cap)
{
  xmlNodePtr e = child(j, which);
  char *s = e ? attr(e, "link") : NULL;
  if (!s) return fail(u, j, "joint '%s': missing <%s link=\"...\"/>", jname, which);
  snprintf(buf, cap, "%s", s);
  xmlFree(s);
  return KELVIN_OK;
}

/* walk the chain and fill the spec */
static kelvin_status build(urdf *u, xmlNodePtr robot, kl_robot_spec *s)
{
  kelvin_status st;
  char *rn = attr(robot, "name");
  snprintf(s->name, sizeof s->name, "%s", rn ? rn : "urdf");
  xmlFree(rn);
  for (xmlNodePtr c = robot->children; c; c = c->next) {
    if (is(c, "link") || is(c, "joint")) {
      if ((is(c, "link") ? u->nlink : u->njoint) >= MAXELEM)
        return fail(u, c, "more than %d <%s> elements", MAXELEM, (const char *)c->name);
      char *nm = attr(c, "name");
      if (!nm) return fail(u, c, "<%s> without a name attribute", (const char *)c->name);
      /* a second element of the same name would be silently shadowed by the first (its mass ignored):
       * an error naming both lines (docs/design.md section 8.1) */
      xmlNodePtr *seen = is(c, "link") ? u->link : u->joint;
      const int nseen = is(c, "link") ? u->nlink : u->njoint;
      for (int i = 0; i < nseen; ++i) {
        char *o = attr(seen[i], "name");
        const int dup = o && strcmp(o, nm) == 0;
        xmlFree(o);
        if (dup) {
          const kelvin_status ds = fail(u, c, "duplicate <%s> name '%s' (first defined at line %ld)",
                                        (const char *)c->name, nm, xmlGetLineNo(seen[i]));
          xmlFree(nm);
          return ds;
        }
      }
      xmlFree(nm);
      if (is(c, "link"))
        u->link[u->nlink++] = c;
      else
        u->joint[u->njoint++] = c;
    }
  }
  if (u->nlink == 0) return fail(u, robot, "robot: no <link> elements");
  /* the root: the one link that is no joint's child */
  char pname[MAXELEM][128], cname[MAXELEM][128], jname[MAXELEM][128];
  for (int j = 0; j < u->njoint; ++j) {
    char *nm = attr(u->joint[j], "name");
    snprintf(jname[j], sizeof jname[j], "%s", nm);
    xmlFree(nm);
    if ((st = joint_end(u, u->joint[j], jname[j], "parent", pname[j], sizeof pname[j])) ||
        (st = joint_end(u, u->joint[j], jname[j], "child", cname[j], sizeof cname[j])))
      return st;
    if (!find_link(u, pname[j]))
      return fail(u, u->joint[j], "joint '%s': parent link '%s' is not defined", jname[j], pname[j]);
    if (!find_link(u, cname[j]))
      return fail(u, u->joint[j], "joint '%s': child link '%s' is not defined", jname[j], cname[j]);
  }
  xmlNodePtr root = NULL;
  for (int i = 0; i < u->nlink; ++i) {
    char *nm = attr(u->link[i], "name");
    int is_child = 0;
    for (int j = 0; j < u->njoint && !is_child; ++j) is_child = strcmp(cname[j], nm) == 0;
    xmlFree(nm);
    if (is_child) continue;
    if (root) return fail(u, u->link[i], "robot: two root links (children of no joint); kelvin needs one serial chain");
    root = u->link[i];
  }
  if (!root) return fail(u, robot, "robot: no root link (the joints form a loop)");
  /* walk: acc places the current link in the frame of the current moving body (or the base) */
  kl_xf acc;
  xf_identity(&acc);
  xmlNodePtr cur = root;
  int nb = 0, steps = 0;
  double bm = 0, bc[3] = {0, 0, 0}, bI[9] = {0};
  while (1) {
    char *cn = attr(cur, "name");
    char curname[128];
    snprintf(curname, sizeof curname, "%s", cn);
    xmlFree(cn);
    static const char *const lok[] = {"inertial", NULL};
    static const char *const lskip[] = {"visual", "collision", NULL};
    char what[200];
    snprintf(what, sizeof what, "link '%s'", curname);
    if ((st = only(u, cur, what, lok, lskip))) return st;
    double m, c[3], I[9];
    if ((st = inertial(u, cur, curname, &m, c, I))) return st;
    if (nb > 0) add_mass(&bm, bc, bI, &acc, m, c, I); /* the base's own mass does not move */
    int next = -1;
    for (int j = 0; j < u->njoint; ++j)
      if (strcmp(pname[j], curname) == 0) {
        if (next >= 0)
          return fail(u, u->joint[j], "link '%s' has two child joints ('%s' and '%s'); kelvin models serial arms",
                      curname, jname[next], jname[j]);
        next = j;
      }
    if (next < 0) break;
    if (++steps > u->njoint) return fail(u, u->joint[next], "joint '%s': the chain loops", jname[next]);
    xmlNodePtr jn = u->joint[next];
    snprintf(what, sizeof what, "joint '%s'", jname[next]);
    static const char *const jok[] = {"origin", "parent", "child", "axis", "limit", NULL};
    static const char *const jskip[] = {"dynamics", "safety_controller", "calibration", NULL};
    if (child(jn, "mimic")) return fail(u, child(jn, "mimic"), "%s: <mimic> joints are not supported", what);
    if ((st = only(u, jn, what, jok, jskip))) return st;
    char *ty = attr(jn, "type");
    if (!ty) return fail(u, jn, "%s: missing attribute 'type'", what);
    const int fixed = strcmp(ty, "fixed") == 0, rev = strcmp(ty, "revolute") == 0, cont = strcmp(ty, "continuous") == 0;
    if (!fixed && !rev && !cont) {
      st = fail(u, jn, "%s: type '%s' is not supported (revolute, continuous and fixed only)", what, ty);
      xmlFree(ty);
      return st;
    }
    xmlFree(ty);
    double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
    xmlNodePtr o = child(jn, "origin");
    char w2[260];
    snprintf(w2, sizeof w2, "%s <origin>", what);
    if (o && ((st = numbers(u, o, "xyz", 3, xyz, 1, w2)) || (st = numbers(u, o, "rpy", 3, rpy, 1, w2)))) return st;
    kl_xf T, A;
    m3_rpy(T.R, rpy);
    memcpy(T.p, xyz, sizeof xyz);
    xf_mul(&A, &acc, &T);
    if (fixed) {
      acc = A;
    } else {
      if (nb >= KL_ROBOT_MAXDOF) return fail(u, jn, "%s: more than %d moving joints", what, KL_ROBOT_MAXDOF);
      if (nb > 0) { /* close the previous body */
        kl_robot_joint_spec *pj = &s->joint[nb - 1];
        pj->mass = bm;
        memcpy(pj->com, bc, sizeof bc);
        pj->inertia[0] = bI[0], pj->inertia[1] = bI[4], pj->inertia[2] = bI[8];
        pj->inertia[3] = bI[1], pj->inertia[4] = bI[2], pj->inertia[5] = bI[5];
      }
      kl_robot_joint_spec *js = &s->joint[nb];
      snprintf(js->name, sizeof js->name, "%s", jname[next]);
      memcpy(js->xyz, A.p, sizeof A.p);
      m3_rpy_of(js->rpy, A.R);
      js->axis[0] = 1.0, js->axis[1] = js->axis[2] = 0.0; /* URDF default axis */
      xmlNodePtr ax = child(jn, "axis");
      snprintf(w2, sizeof w2, "%s <axis>", what);
      if (ax && (st = numbers(u, ax, "xyz", 3, js->axis, 1, w2))) return st;
      if (!(v3_norm(js->axis) > 1e-12)) return fail(u, ax ? ax : jn, "%s xyz: the axis must be a non-zero vector", w2);
      xmlNodePtr lim = child(jn, "limit");
      snprintf(w2, sizeof w2, "%s <limit>", what);
      if (!lim) return fail(u, jn, "%s: missing <limit> (kelvin needs the joint speed limit 'velocity')", what);
      js->lo = -INFINITY, js->hi = INFINITY;
      if (rev) {
        if ((st = numbers(u, lim, "lower", 1, &js->lo, 0, w2)) || (st = numbers(u, lim, "upper", 1, &js->hi, 0, w2)))
          return st;
        if (!(js->lo < js->hi)) return fail(u, lim, "%s: need lower < upper, got [%g, %g] rad", w2, js->lo, js->hi);
      }
      if ((st = numbers(u, lim, "velocity", 1, &js->vmax, 0, w2))) return st;
      if (!(js->vmax > 0)) return fail(u, lim, "%s velocity: must be > 0 rad/s, got %g", w2, js->vmax);
      ++nb;
      xf_identity(&acc);
      bm = 0, bc[0] = bc[1] = bc[2] = 0;
      memset(bI, 0, sizeof bI);
    }
    char *cn2 = cname[next];
    cur = find_link(u, cn2);
  }
  if (nb == 0) return fail(u, robot, "robot: no revolute or continuous joint between the root and the leaf link");
  kl_robot_joint_spec *pj = &s->joint[nb - 1];
  pj->mass = bm;
  memcpy(pj->com, bc, sizeof bc);
  pj->inertia[0] = bI[0], pj->inertia[1] = bI[4], pj->inertia[2] = bI[8];
  pj->inertia[3] = bI[1], pj->inertia[4] = bI[2], pj->inertia[5] = bI[5];
  s->ndof = nb;
  s->conv = KL_ROBOT_URDF;
  memcpy(s->tool_xyz, acc.p, sizeof acc.p); /* TCP = the leaf link's frame */
  m3_rpy_of(s->tool_rpy, acc.R);
  /* every moving body needs mass and a positive-definite inertia (M(q) must be positive definite) */
  for (int i = 0; i < nb; ++i) {
    char sub[300];
    xmlNodePtr at = NULL;
    for (int j = 0; j < u->njoint; ++j)
      if (strcmp(jname[j], s->joint[i].name) == 0) at = u->joint[j];
    if (kl_robot_check_mass(s->joint[i].mass, 0, sub, sizeof sub))
      return fail(u, at, "joint '%s': the links it moves have no mass (inertial mass: %s)", s->joint[i].name, sub);
    if (kl_robot_check_inertia(s->joint[i].inertia, sub, sizeof sub))
      return fail(u, at, "joint '%s': the inertia of the links it moves is %s", s->joint[i].name, sub);
  }
  return KELVIN_OK;
}

/* parse with libxml2, walk the chain into a spec, create the robot */
#define KL_URDF_MAX_BYTES (16L << 20) /* a URDF with inline meshes is still far smaller */

kelvin_status kl_robot_load_urdf(const char *path, kl_robot **out, char *msg, int cap)
{
  if (out) *out = NULL;
  if (msg && cap > 0) msg[0] = '\0';
  if (!path || !out) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "kl_robot_load_urdf: path and out must not be NULL");
    return KELVIN_ERR_ARG;
  }
  char *text = NULL, why[256];
  size_t len = 0;
  kelvin_status rs = kl_io_slurp(path, KL_URDF_MAX_BYTES, &text, &len, why, sizeof why);
  if (rs != KELVIN_OK) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: %s", path, why);
    return rs;
  }
  urdf u;
  memset(&u, 0, sizeof u);
  u.path = path, u.msg = msg, u.cap = cap;
  xmlParserCtxtPtr ctx = xmlNewParserCtxt();
  if (!ctx) {
    free(text);
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "out of memory");
    return KELVIN_ERR_NOMEM;
  }
  /* no network, no entity substitution, no DTD loading; libxml2's own limits against amplification */
  const int opt = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES;
  xmlDocPtr doc = len > (size_t)INT_MAX ? NULL : xmlCtxtReadMemory(ctx, text, (int)len, path, NULL, opt);
  free(text);
  kelvin_status st = KELVIN_OK;
  if (!doc) {
    const xmlError *e = xmlCtxtGetLastError(ctx);
    char em[300] = "unknown error";
    if (e && e->message) {
      snprintf(em, sizeof em, "%s", e->message);
      const size_t L = strlen(em);
      if (L && em[L - 1] == '\n') em[L - 1] = '\0';
    }
    if (msg && cap > 0) {
      snprintf(msg, (size_t)cap, "%s:%d: not well-formed XML: %s", path, e ? e->line : 0, em);
      kl_msg_oneline(msg);
    }
    xmlFreeParserCtxt(ctx);
    return KELVIN_ERR_CONFIG;
  }
  xmlNodePtr root = xmlDocGetRootElement(doc);
  if (doc->intSubset || doc->extSubset) {
    if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s:%ld: a DOCTYPE (and its entities) is not supported in a URDF", path,
                                 doc->intSubset ? (long)xmlGetLineNo((xmlNodePtr)doc->intSubset) : 1L);
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctx);
    return KELVIN_ERR_CONFIG;
  }
  kl_robot_spec *s = calloc(1, sizeof *s);
  if (!s)
    st = KELVIN_ERR_NOMEM;
  else if (!is(root, "robot"))
    st = fail(&u, root, "the root element must be <robot>, got <%s>", root ? (const char *)root->name : "");
  else
    st = build(&u, root, s);
  if (st == KELVIN_OK) {
    char sub[400];
    st = kl_robot_create(s, out, sub, sizeof sub);
    if (st != KELVIN_OK) {
      if (msg && cap > 0) snprintf(msg, (size_t)cap, "%s: %s", path, sub);
      st = st == KELVIN_ERR_NOMEM ? st : KELVIN_ERR_CONFIG;
    }
  } else if (st == KELVIN_ERR_NOMEM && msg && cap > 0) {
    snprintf(msg, (size_t)cap, "out of memory");
  }
  free(s);
  xmlFreeDoc(doc);
  xmlFreeParserCtxt(ctx);
  if (msg && cap > 0) kl_msg_oneline(msg);
  return st;
}
