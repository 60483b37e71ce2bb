/* optimiser/removal.c: the height field of a grinding path and Preston's removal on it (optimiser/removal.h;
 * docs/design.md section 9). The law is kernels/kl_removal.h. */
#include "optimiser/removal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kl_material.h"
#include "kernels/kl_removal.h"

#define KL_RM_CELLS_MAX 4000000 /* the most cells of a height field (32 MB per array) */
#define KL_RM_RES_MIN 5e-6      /* the derived cell size's bounds [m] */
#define KL_RM_RES_MAX 1e-3

#define FAIL(code, ...)                                                                                      \
  do {                                                                                                       \
    snprintf(msg, (size_t)cap, __VA_ARGS__);                                                                 \
    return code;                                                                                             \
  } while (0)

//------------------------------------------------------------------------------------------------------
// the law

/* E* as the problem's contact uses it: from the materials, or, where contact.stiffness overrides the Hertz
 * stiffness of the base law (hc or general at the base exponent), the E* that stiffness stands for:
 * K = 4/3 E* sqrt(R) (ball), K = pi/4 E* L (disc; optimiser/problem.c, contact constants). */
static double law_estar(const kl_problem *pb)
{
  const kl_settings *s = &pb->set;
  const int disc = s->tool_shape == KL_TOOL_DISC;
  const double nbase = disc ? 1.0 : 1.5;
  if (s->contact_K > 0 && s->model != KL_MODEL_KV && pb->gp[KL_GP_NC] == nbase)
    return disc ? 4.0 * pb->Kc / (KL_PI * s->tool_width) : 0.75 * pb->Kc / sqrt(s->tool_R);
  return kl_estar(s->tool_E, s->tool_nu, s->work_E, s->work_nu);
}

kelvin_status kl_removal_law_of(const kl_problem *pb, kl_removal_law *law, char *msg, int cap)
{
  const kl_settings *s = &pb->set;
  const int disc = s->tool_shape == KL_TOOL_DISC;
  memset(law, 0, sizeof *law);
  if (!(s->preston > 0))
    FAIL(KELVIN_ERR_CONFIG, "removal.preston: Preston's coefficient is 0 (no removal); set it (m^2/N) to remove material");
  if (!(s->spindle_rpm > 0))
    FAIL(KELVIN_ERR_CONFIG, "tool.spindle_rpm: removal.preston is set but the spindle does not turn (0 rpm): the abrasive "
                            "has no cutting speed");
  const double lead = s->lead_deg * KL_PI / 180.0;
  law->kp = s->preston;
  law->omega = s->spindle_rpm * 2.0 * KL_PI / 60.0;
  law->R = s->tool_R;
  law->rc = kl_removal_rc(disc, s->tool_R, lead);
  law->L = disc ? s->tool_width : 0.0;
  law->Es = law_estar(pb);
  law->G = s->grinding_ratio;
  if (!(law->rc > 0))
    FAIL(KELVIN_ERR_CONFIG, "tool.lead_deg: a ball-end spinning about its axis cuts at R sin(lead), nothing at lead 0 "
                            "(the tip stands still); set tool.lead_deg");
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// the grid

void kl_surface_free(kl_surface *sf)
{
  if (!sf) return;
  free(sf->stock);
  free(sf->removed);
  free(sf->bound);
  memset(sf, 0, sizeof *sf);
}

/* bounds of the rows (optimiser/removal.h, kl_surface.bound): per row the largest stock and stock - removed,
 * then the largest stock */
static void bound_row(kl_surface *sf, int i)
{
  if (!sf->bound) return;
  const double *st = sf->stock + (size_t)i * sf->nw, *rm = sf->removed + (size_t)i * sf->nw;
  double e = -INFINITY;
  for (int j = 0; j < sf->nw; ++j) {
    const double x = st[j] - rm[j];
    e = x > e ? x : e;
  }
  sf->bound[sf->nu + i] = e;
}

static void bound_all(kl_surface *sf)
{
  double g = -INFINITY;
  for (int i = 0; i < sf->nu; ++i) {
    const double *st = sf->stock + (size_t)i * sf->nw;
    double m = -INFINITY;
    for (int j = 0; j < sf->nw; ++j) m = fmax(m, st[j]);
    sf->bound[i] = m;
    g = fmax(g, m);
    bound_row(sf, i);
  }
  sf->bound[2 * sf->nu] = g;
  sf->bound[2 * sf->nu + 1] = 0.0; /* the last geometry-limited sub-step's lowering (kl_surface_deposit's guess) */
}

kelvin_status kl_surface_copy(const kl_surface *from, kl_surface *to)
{
  const size_t n = (size_t)from->nu * from->nw;
  memset(to, 0, sizeof *to);
  to->nu = from->nu, to->nw = from->nw, to->du = from->du, to->dw = from->dw, to->tool_R = from->tool_R;
  to->stock = malloc(n * sizeof(double));
  to->removed = malloc(n * sizeof(double));
  to->bound = malloc(((size_t)2 * from->nu + 2) * sizeof(double));
  if (!to->stock || !to->removed || !to->bound) {
    kl_surface_free(to);
    return KELVIN_ERR_NOMEM;
  }
  memcpy(to->stock, from->stock, n * sizeof(double));
  memcpy(to->removed, from->removed, n * sizeof(double));
  if (from->bound)
    memcpy(to->bound, from->bound, ((size_t)2 * from->nu + 2) * sizeof(double));
  else
    bound_all(to);
  return KELVIN_OK;
}

/* the path's point, unit normal and unit binormal n x t at arc length u (linear between samples) */
static void path_at(const kl_problem *pb, double u, double p[3], double n[3], double b[3])
{
  const int ns = pb->ns;
  int k = 0;
  if (u <= pb->s[0])
    k = 0;
  else if (u >= pb->s[ns - 1])
    k = ns - 2;
  else {
    int lo = 0, hi = ns - 1; /* s[lo] <= u < s[hi] */
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (pb->s[mid] <= u)
        lo = mid;
      else
        hi = mid;
    }
    k = lo;
  }
  const double ds = pb->s[k + 1] - pb->s[k], f = ds > 0 ? fmin(1.0, fmax(0.0, (u - pb->s[k]) / ds)) : 0.0;
  double t[3], nn = 0, tn = 0;
  for (int i = 0; i < 3; ++i) {
    p[i] = (1 - f) * pb->p[3 * k + i] + f * pb->p[3 * (k + 1) + i];
    n[i] = (1 - f) * pb->nrm[3 * k + i] + f * pb->nrm[3 * (k + 1) + i];
    t[i] = (1 - f) * pb->tan[3 * k + i] + f * pb->tan[3 * (k + 1) + i];
  }
  for (int i = 0; i < 3; ++i) nn += n[i] * n[i];
  nn = sqrt(nn);
  for (int i = 0; i < 3; ++i) n[i] /= nn;
  for (int i = 0; i < 3; ++i) tn += t[i] * n[i];
  for (int i = 0; i < 3; ++i) t[i] -= tn * n[i]; /* t made normal to n */
  b[0] = n[1] * t[2] - n[2] * t[1];
  b[1] = n[2] * t[0] - n[0] * t[2];
  b[2] = n[0] * t[1] - n[1] * t[0];
  const double bb = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
  for (int i = 0; i < 3; ++i) b[i] /= bb;
}

/* the actual part's height above the CAD point p(u) + w b(u) along n(u) (its tangent plane across the path:
 * docs/design.md section 9.2); 0 and *ok = 0 where the ray finds no part */
static double actual_height(const kl_problem *pb, double u, double w, double H, int *ok)
{
  double p[3], n[3], b[3], o[3], d[3], t, nrm[3];
  path_at(pb, u, p, n, b);
  for (int i = 0; i < 3; ++i) o[i] = p[i] + w * b[i] + H * n[i], d[i] = -n[i];
  *ok = kl_mesh_raycast(pb->actual, o, d, 0.0, 2.0 * H, &t, nrm);
  return *ok ? H - t : 0.0;
}

kelvin_status kl_surface_init(const kl_problem *pb, const kl_removal_law *law, kl_surface *sf, char *msg, int cap)
{
  const kl_settings *s = &pb->set;
  memset(sf, 0, sizeof *sf);
  const double R = law->R, H = KL_PLAUSIBLE_OFFSET + 0.25 * R; /* rays start this far above the CAD */
  const int disc = law->L > 0;
  /* the cell size: a quarter of the Hertz radius at target.force (the disc: half its half-width b) */
  const double a_t = kl_removal_patch(s->target_F, R, law->L, law->Es);
  double du = s->rm_resolution, dw = du;
  if (!isfinite(du)) {
    du = fmin(KL_RM_RES_MAX, fmax(KL_RM_RES_MIN, disc ? 0.5 * a_t : 0.25 * a_t));
    /* the disc removes uniformly across its width: 65 cells across it are enough there */
    dw = disc ? fmin(KL_RM_RES_MAX, fmax(du, law->L / 65.0)) : du;
  }
  const int nu = (int)floor(pb->length / du + 1e-9) + 1;
  if (nu < 2 || (double)nu > KL_RM_CELLS_MAX)
    FAIL(KELVIN_ERR_CONFIG, "removal.resolution: %.3g m cells along the %.4g m path make %d rows (at most %d cells in all)",
         du, pb->length, nu, KL_RM_CELLS_MAX);
  /* the width: the groove the removal of the highest stock leaves, from the stock along the path */
  double width = s->rm_width;
  if (!isfinite(width)) {
    double smax = 0;
    for (int i = 0; i < nu; ++i) {
      int ok;
      const double h = actual_height(pb, i * du, 0.0, H, &ok) - s->rm_allowance;
      if (ok) smax = fmax(smax, h);
    }
    const double a_m = kl_removal_patch(s->max_F, R, law->L, law->Es);
    width = disc ? law->L + 4.0 * a_m : 2.0 * sqrt(2.0 * R * (smax + a_m * a_m / R)) + 4.0 * a_m;
  }
  int nw = 2 * (int)ceil(0.5 * width / dw) + 1;
  if ((double)nu * nw > KL_RM_CELLS_MAX)
    FAIL(KELVIN_ERR_CONFIG,
         "removal.resolution: %.3g m cells over the %.4g m path and %.3g m across it make %.3g million cells, more than "
         "%d million; coarsen removal.resolution or narrow removal.width",
         du, pb->length, width, (double)nu * nw * 1e-6, KL_RM_CELLS_MAX / 1000000);
  const size_t n = (size_t)nu * nw;
  sf->nu = nu, sf->nw = nw, sf->du = du, sf->dw = dw, sf->tool_R = R;
  sf->stock = malloc(n * sizeof(double));
  sf->removed = calloc(n, sizeof(double));
  sf->bound = malloc(((size_t)2 * nu + 2) * sizeof(double));
  if (!sf->stock || !sf->removed || !sf->bound) {
    kl_surface_free(sf);
    FAIL(KELVIN_ERR_NOMEM, "removal: out of memory for a %d x %d height field", nu, nw);
  }
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nw; ++j) {
      const double w = (j - (nw - 1) / 2) * dw;
      int ok;
      const double h = actual_height(pb, i * du, w, H, &ok);
      if (!ok) {
        kl_surface_free(sf);
        FAIL(KELVIN_ERR_CONFIG,
             "removal.width: the height field's cell at s = %.4g m, %.4g m across the path is off the part (no surface "
             "within %.3g m along the normal); narrow removal.width",
             i * du, w, H);
      }
      sf->stock[(size_t)i * nw + j] = h - s->rm_allowance;
    }
  bound_all(sf);
  return KELVIN_OK;
}

//------------------------------------------------------------------------------------------------------
// the rigid tool on the surface

/* upper bounds of row i: of stock (which = 0) or of stock - removed (which = 1) */
static double row_bound(const kl_surface *sf, int i, int which)
{
  if (sf->bound) return sf->bound[which * sf->nu + i];
  const double *st = sf->stock + (size_t)i * sf->nw, *rm = sf->removed + (size_t)i * sf->nw;
  double m = -INFINITY;
  for (int j = 0; j < sf->nw; ++j) m = fmax(m, which ? st[j] - rm[j] : st[j]);
  return m;
}

static double stock_max(const kl_surface *sf)
{
  if (sf->bound) return sf->bound[2 * sf->nu];
  double m = -INFINITY;
  for (size_t c = 0; c < (size_t)sf->nu * sf->nw; ++c) m = fmax(m, sf->stock[c]);
  return m;
}

/* The disc's cells across row: those its width [wc - L/2, wc + L/2] covers, at least in part (*j0..*j1) */
static void disc_cells(const kl_surface *sf, double L, double wc, int *j0, int *j1)
{
  const int jc = (sf->nw - 1) / 2;
  *j0 = jc + (int)ceil((wc - 0.5 * L) / sf->dw - 0.5 + 1e-9);
  *j1 = jc + (int)floor((wc + 0.5 * L) / sf->dw + 0.5 - 1e-9);
}

/* The fraction of cell j's width [w_j - dw/2, w_j + dw/2] under the disc's width (1 for the ball) */
static double disc_cover(const kl_surface *sf, double L, double wc, int j)
{
  if (!(L > 0)) return 1.0;
  const double w = (j - (sf->nw - 1) / 2) * sf->dw;
  const double lo = fmax(w - 0.5 * sf->dw, wc - 0.5 * L), hi = fmin(w + 0.5 * sf->dw, wc + 0.5 * L);
  return fmax(0.0, fmin(1.0, (hi - lo) / sf->dw));
}

/* The first touch of the rigid tool (radius R; disc: L > 0, its width across) with the axis point above
 * (uc, wc): max over the cells of (height - rho^2 / (2 R)), height stock (which = 0) or stock - removed
 * (which = 1); -INFINITY if no cell is under it. Rows are taken outward from uc and skipped where their
 * bound cannot beat the best so far; within a row only the cells that could. *at (nullable) gets the
 * along-path place u_i of the cell that touches (uc where none does). */
static double first_touch(const kl_surface *sf, double R, double L, double uc, double wc, int which, double *at)
{
  const int nu = sf->nu, nw = sf->nw, jc = (nw - 1) / 2;
  const double gmax = stock_max(sf), r2 = 2.0 * R;
  const int ic = (int)lround(uc / sf->du);
  double best = -INFINITY, ui = uc;
  for (int step = 0;; ++step) {
    int any = 0;
    for (int side = 0; side < (step ? 2 : 1); ++side) {
      const int i = side ? ic - step : ic + step;
      const double du = i * sf->du - uc, ru = du * du / r2;
      if (fabs(du) > R) continue;                          /* beyond the tool */
      if (best > -INFINITY && ru > gmax - best) continue; /* beyond: nothing can beat best */
      any = 1;
      if (i < 0 || i >= nu) continue;
      const double rb = row_bound(sf, i, which);
      if (!(rb - ru > best)) continue;
      int j0, j1;
      if (L > 0) { /* the disc: the cells under its width, rho along the path only */
        disc_cells(sf, L, wc, &j0, &j1);
      } else {
        const double q = best > -INFINITY ? r2 * (rb - best) - du * du : R * R;
        if (!(q > 0)) continue;
        const double hw = fmin(sqrt(q), R);
        j0 = jc + (int)floor((wc - hw) / sf->dw);
        j1 = jc + (int)ceil((wc + hw) / sf->dw);
      }
      j0 = j0 < 0 ? 0 : j0;
      j1 = j1 > nw - 1 ? nw - 1 : j1;
      const double *st = sf->stock + (size_t)i * nw, *rm = sf->removed + (size_t)i * nw;
      for (int j = j0; j <= j1; ++j) {
        const double dw = (j - jc) * sf->dw - wc, rho2 = L > 0 ? du * du : du * du + dw * dw;
        const double e = (which ? st[j] - rm[j] : st[j]) - rho2 / r2;
        if (e > best) {
          best = e;
          ui = i * sf->du;
        }
      }
    }
    if (!any) break;
    if (ic - step < 0 && ic + step >= nu) break;
  }
  if (at) *at = ui;
  return best;
}

double kl_surface_drop(const kl_surface *sf, const kl_removal_law *law, double s)
{
  return kl_surface_drop_slope(sf, law, s, NULL);
}

double kl_surface_drop_slope(const kl_surface *sf, const kl_removal_law *law, double s, double *slope)
{
  const double R = sf->tool_R > 0 ? sf->tool_R : law->R;
  double un, ub;
  const double now = first_touch(sf, R, law->L, s, 0.0, 1, &un), before = first_touch(sf, R, law->L, s, 0.0, 0, &ub);
  if (slope) *slope = 0.0;
  if (!(now > -INFINITY) || !(before > -INFINITY) || !(now < before)) return 0.0;
  /* each first touch is its cell's height - (u_i - s)^2 / 2R there: d/ds = (u_i - s) / R */
  if (slope) *slope = (un - ub) / R;
  return now - before;
}

void kl_surface_drops(const kl_problem *pb, const kl_surface *sf, const kl_removal_law *law, double *drop)
{
  for (int k = 0; k < pb->ns; ++k) drop[k] = kl_surface_drop(sf, law, pb->s[k]);
}

void kl_protrusion_of_drop(const kl_problem *pb, const double *drop, double *h, double *dh)
{
  const int ns = pb->ns;
  for (int k = 0; k < ns; ++k) h[k] = pb->h[k] + drop[k];
  for (int k = 0; k < ns; ++k) { /* centred differences, one-sided at the ends (as optimiser/problem.c) */
    const int a = k > 0 ? k - 1 : 0, b = k + 1 < ns ? k + 1 : ns - 1;
    dh[k] = (h[b] - h[a]) / (pb->s[b] - pb->s[a]);
  }
}

//------------------------------------------------------------------------------------------------------
// the deposit

typedef struct cell_ov {
  size_t c;  /* cell index */
  double ov; /* overlap [m] */
  double f;  /* the fraction of the cell under the tool (the disc's edge cells; 1 for the ball) */
} cell_ov;

/* The cells the rigid tool at (uc, wc), lowered to z (its lowest point), overlaps: height - rho^2/(2R) > z.
 * Appends to *buf (grown); returns the count, or -1 out of memory. */
static long overlap_cells(const kl_surface *sf, double R, double L, double uc, double wc, double z, cell_ov **buf,
                          size_t *bcap)
{
  const int nu = sf->nu, nw = sf->nw, jc = (nw - 1) / 2;
  const double gmax = stock_max(sf), r2 = 2.0 * R;
  if (!(gmax > z)) return 0;
  const double reach = fmin(R, sqrt(r2 * (gmax - z)));
  int i0 = (int)floor((uc - reach) / sf->du), i1 = (int)ceil((uc + reach) / sf->du);
  i0 = i0 < 0 ? 0 : i0;
  i1 = i1 > nu - 1 ? nu - 1 : i1;
  long n = 0;
  for (int i = i0; i <= i1; ++i) {
    const double du = i * sf->du - uc, rb = row_bound(sf, i, 1);
    const double q = r2 * (rb - z) - du * du;
    if (!(q > 0)) continue;
    int j0, j1;
    if (L > 0) {
      disc_cells(sf, L, wc, &j0, &j1);
    } else {
      const double hw = fmin(R, sqrt(q));
      j0 = jc + (int)floor((wc - hw) / sf->dw);
      j1 = jc + (int)ceil((wc + hw) / sf->dw);
    }
    j0 = j0 < 0 ? 0 : j0;
    j1 = j1 > nw - 1 ? nw - 1 : j1;
    for (int j = j0; j <= j1; ++j) {
      const size_t c = (size_t)i * nw + j;
      const double dw = (j - jc) * sf->dw - wc, rho2 = L > 0 ? du * du : du * du + dw * dw;
      const double ov = sf->stock[c] - sf->removed[c] - (z + rho2 / r2);
      if (!(ov > 0)) continue;
      if ((size_t)n == *bcap) {
        const size_t nc = *bcap ? 2 * *bcap : 256;
        cell_ov *nb = realloc(*buf, nc * sizeof *nb);
        if (!nb) return -1;
        *buf = nb, *bcap = nc;
      }
      (*buf)[n].c = c, (*buf)[n].ov = ov, (*buf)[n].f = disc_cover(sf, L, wc, j);
      ++n;
    }
  }
  return n;
}

/* cells by their height g over the tool, highest first */
static int by_height(const void *a, const void *b)
{
  const double ga = ((const cell_ov *)a)->ov, gb = ((const cell_ov *)b)->ov;
  return ga > gb ? -1 : ga < gb ? 1 : 0;
}

#define KL_RM_BINS 256

/* The lowering z in (0, zh] at which the cells' material above the tool, V(z) = sum f max(0, g + z) (g = c[q].ov in
 * (-zh, 0]; per unit cell area), is v: V is piecewise linear in z, its pieces at the heights. The heights are binned
 * (O(n)); only the bin where V reaches v is sorted and walked. Reorders c. */
static double carve_depth(cell_ov *c, long n, double zh, double v)
{
  double fa[KL_RM_BINS], fg[KL_RM_BINS];
  memset(fa, 0, sizeof fa);
  memset(fg, 0, sizeof fg);
  const double w = zh / KL_RM_BINS;
  for (long q = 0; q < n; ++q) { /* bin b holds g in [-zh + b w, -zh + (b + 1) w) */
    int b = (int)floor((c[q].ov + zh) / w);
    b = b < 0 ? 0 : b >= KL_RM_BINS ? KL_RM_BINS - 1 : b;
    fa[b] += c[q].f;
    fg[b] += c[q].f * c[q].ov;
  }
  double A = 0, B = 0;
  int b = KL_RM_BINS - 1;
  for (; b >= 0; --b) { /* the bins above b fully active: V(z) = A z + B from z = -(lowest g of bin b + 1) */
    const double zb = zh - b * w; /* the z at which all of bin b is active */
    if ((A + fa[b]) * zb + B + fg[b] >= v) break;
    A += fa[b];
    B += fg[b];
  }
  if (b < 0) return A > 0 ? (v - B) / A : zh; /* all active (zh was large enough: v reached at zh) */
  /* within bin b: its cells sorted, highest first, activated one by one */
  const double glo = -zh + b * w;
  long m = 0;
  for (long q = 0; q < n; ++q) {
    int bq = (int)floor((c[q].ov + zh) / w);
    bq = bq < 0 ? 0 : bq >= KL_RM_BINS ? KL_RM_BINS - 1 : bq;
    if (bq == b) {
      const cell_ov tmp = c[m];
      c[m++] = c[q];
      c[q] = tmp;
    }
  }
  qsort(c, (size_t)m, sizeof *c, by_height);
  double z = A > 0 ? (v - B) / A : -glo;
  for (long q = 0; q < m; ++q) {
    if (A > 0 && z <= -c[q].ov) break; /* reached before this cell starts */
    A += c[q].f;
    B += c[q].f * c[q].ov;
    z = (v - B) / A;
  }
  return z;
}

void kl_surface_worn_law(const kl_surface *sf, kl_removal_law *law)
{
  if (sf->tool_R > 0 && sf->tool_R != law->R) {
    law->rc *= sf->tool_R / law->R;
    law->R = sf->tool_R;
  }
}

double kl_surface_deposit(kl_surface *sf, kl_removal_law *law, double F, double u0, double w0, double u1, double w1,
                          double dt)
{
  if (!(F > 0) || !(dt > 0)) return 0.0;
  kl_surface_worn_law(sf, law); /* the surface carries the worn radius */
  const double len = sqrt((u1 - u0) * (u1 - u0) + (w1 - w0) * (w1 - w0));
  const double vrel = kl_removal_vrel(law->omega, law->rc, len / dt);
  const double a0 = kl_removal_patch(F, law->R, law->L, law->Es);
  const int nsub = a0 > 0 && len > 0 ? (int)ceil(len / (0.25 * a0) - 1e-9) : 1;
  const double dts = dt / nsub;
  cell_ov *buf = NULL;
  size_t bcap = 0;
  double vol = 0;
  for (int m = 0; m < nsub; ++m) {
    const double f = (m + 0.5) / nsub, uc = u0 + f * (u1 - u0), wc = w0 + f * (w1 - w0);
    const double R = law->R, a = kl_removal_patch(F, R, law->L, law->Es), ap = kl_removal_approach(a, R);
    const double zt = first_touch(sf, R, law->L, uc, wc, 1, NULL);
    const double dv = kl_removal_rate(law->kp, F, vrel) * dts; /* k_p F v_rel dt: the volume the law removes */
    vol += dv;
    if (!(zt > -INFINITY)) continue; /* off the grid */
    /* The cells the tool overlaps when lowered by zh >= ap from its first touch, with their height g over its
     * lowest point (g in (-zh, 0]); zh is the approach ap, or where the last sub-step was geometry-limited (below),
     * a little more than its lowering; deepened until it holds dv */
    const double da = sf->du * sf->dw, zlast = sf->bound ? sf->bound[2 * sf->nu + 1] : 0.0;
    double zh = zlast > 0 ? fmax(ap, 1.25 * zlast) : ap, vap = 0, vzh = 0;
    long n = 0;
    for (;;) {
      n = overlap_cells(sf, R, law->L, uc, wc, zt - zh, &buf, &bcap);
      if (n < 0) {
        free(buf);
        return NAN;
      }
      vap = vzh = 0;
      for (long q = 0; q < n; ++q) {
        buf[q].ov -= zh; /* g */
        vzh += buf[q].f * (buf[q].ov + zh);
        if (buf[q].ov + ap > 0) vap += buf[q].f * (buf[q].ov + ap);
      }
      vap *= da, vzh *= da; /* the material inside the tool lowered by ap, by zh */
      if (dv <= vap || vzh >= dv || zh > R) break;
      /* deeper: at least twice, at least twice a flat part's lowering (the ball's cap pi R z^2 = dv, the disc's
       * (4/3) L sqrt(2R) z^1.5 = dv) */
      zh = fmax(2.0 * zh, 2.0 * (law->L > 0 ? pow(0.75 * dv / (law->L * sqrt(2.0 * R)), 2.0 / 3.0) : sqrt(dv / (KL_PI * R))));
    }
    int ilo = sf->nu, ihi = -1;
    if (dv <= vap) {
      /* Preston over Hertz's pressure: p = C sqrt(overlap), overlap = g + ap, sum p f du dw = F (f the cell's
       * fraction under the tool): each cell's depth k_p p v_rel dt_sub, over its fraction f */
      double sq = 0;
      for (long q = 0; q < n; ++q)
        if (buf[q].ov + ap > 0) sq += buf[q].f * sqrt(buf[q].ov + ap);
      if (sf->bound) sf->bound[2 * sf->nu + 1] = 0.0;
      if (!(sq > 0)) continue;
      const double C = F / (sq * da);
      for (long q = 0; q < n; ++q) {
        const double ov = buf[q].ov + ap;
        if (!(ov > 0)) continue;
        const size_t c = buf[q].c;
        sf->removed[c] += buf[q].f * kl_removal_rate(law->kp, C * sqrt(ov), vrel) * dts;
        const int i = (int)(c / (size_t)sf->nw);
        ilo = i < ilo ? i : ilo;
        ihi = i > ihi ? i : ihi;
      }
    } else {
      /* geometry-limited (docs/design.md section 9.1): the law asks for more than the tool reaches at the approach;
       * the rigid tool cannot remove what it does not reach, so it sinks by z (> ap) until the material above its
       * profile, sum f max(0, g + z) du dw, is dv, and carves that */
      const double z = carve_depth(buf, n, zh, dv / da);
      if (sf->bound) sf->bound[2 * sf->nu + 1] = z;
      for (long q = 0; q < n; ++q) {
        const double dz = buf[q].ov + z;
        if (!(dz > 0)) continue;
        const size_t c = buf[q].c;
        sf->removed[c] += buf[q].f * dz;
        const int i = (int)(c / (size_t)sf->nw);
        ilo = i < ilo ? i : ilo;
        ihi = i > ihi ? i : ihi;
      }
    }
    for (int i = ilo; i <= ihi; ++i) bound_row(sf, i);
    /* wear (docs/design.md section 9.1): the worn volume dv / G spread evenly over the tool's working band,
     * the ball's hemisphere in use 2 pi R^2, the disc's periphery 2 pi R L */
    if (law->G > 0) {
      const double band = law->L > 0 ? 2.0 * KL_PI * R * law->L : 2.0 * KL_PI * R * R;
      const double Rn = fmax(0.0, R - dv / law->G / band);
      law->rc *= R > 0 ? Rn / R : 0.0;
      law->R = Rn;
      sf->tool_R = Rn;
    }
  }
  free(buf);
  return vol;
}

double kl_surface_deposit_pass(kl_surface *sf, kl_removal_law *law, const kl_problem *pb, const double *favg,
                               const double *t)
{
  double vol = 0;
  for (int k = 1; k < pb->ns; ++k)
    vol += kl_surface_deposit(sf, law, favg[k], pb->s[k - 1], 0.0, pb->s[k], 0.0, t[k] - t[k - 1]);
  return vol;
}

//------------------------------------------------------------------------------------------------------
// what a surface leaves

int kl_surface_track(const kl_surface *sf, const kl_removal_law *law, const kl_problem *pb)
{
  const double R = sf->tool_R > 0 ? sf->tool_R : law->R;
  const double half = law->L > 0 ? 0.5 * law->L : kl_removal_hertz_a(pb->set.target_F, R, law->Es);
  return (int)floor(half / sf->dw + 1e-9);
}

void kl_surface_stats_of(const kl_surface *sf, const kl_removal_law *law, const kl_problem *pb, kl_surface_stats *st)
{
  memset(st, 0, sizeof *st);
  const int nu = sf->nu, nw = sf->nw, jc = (nw - 1) / 2;
  const int jt = kl_surface_track(sf, law, pb);
  double ss = 0;
  long nt = 0;
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nw; ++j) {
      const size_t c = (size_t)i * nw + j;
      const double rm = sf->removed[c], e = sf->stock[c] - rm;
      st->volume += rm;
      st->removed_max = fmax(st->removed_max, rm);
      st->gouge = fmax(st->gouge, rm - fmax(sf->stock[c], 0.0));
      if (abs(j - jc) <= jt) {
        const double r = fmax(e, 0.0);
        ss += r * r;
        ++nt;
        st->residual_max = fmax(st->residual_max, r);
      }
    }
  st->volume *= sf->du * sf->dw;
  st->residual_rms = nt ? sqrt(ss / (double)nt) : 0.0;
}
