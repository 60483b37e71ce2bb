/* engine/world_impl.h: internals shared by world.c, collision_ccd.c and integrate.c (not installed). */
#ifndef KL_ENGINE_WORLD_IMPL_H
#define KL_ENGINE_WORLD_IMPL_H

#include "engine/world.h"
#include "kernels/kl_contact_kv.h"

#define KL_TRI_CAP 8192 /* triangles per convex-mesh query; more are counted as overflow */
#define KL_QC_CAP 8192    /* triangles a sphere's query cache holds; a wider answer is not cached */
#define KL_QC_SLACK 0.005 /* the cached ball's slack: at most this fraction of the sphere's radius */
#define KL_QC_WAYS 2      /* cached answers per sphere shape (its first meshes) */
_Static_assert(KL_QC_CAP <= KL_TRI_CAP, "a cached answer, filtered, must fit the triangle scratch");
#define KL_CYL_RIM 16   /* rim samples per cylinder end used as contact points on planes and meshes */

/* A candidate contact from the narrow phase */
typedef struct kl_feature {
  int shape[2], body[2]; /* +F n on body[0] */
  int key;               /* feature within the pair */
  double pos[3];         /* contact point [m] */
  double normal[3];      /* unit, from shape[1] towards shape[0] */
  double depth;          /* penetration, padding included [m]; < 0 is a gap */
  double fix;            /* the data's depth correction (world.h, fix) in depth and pos, 0 without one */
  double fixg[3];        /* its gradient along the surface (world.h, fix), 0 without one */
} kl_feature;

/* Per-contact 1-D system of the current sub-step */
typedef struct kl_csys {
  double m, K, D, fe;   /* effective mass, stiffness, damping, external force along the normal */
  double d0, v0;        /* start penetration and rate */
  double tend;          /* located end inside the step (INFINITY if none) */
  double r[2][3];       /* contact point relative to the two centres of mass */
  double tscale;        /* time scale of the contact (period or impact duration) [s] */
  double fe_ext;        /* external force alone */
  kl_kv_poly dense;     /* Hunt-Crossley: the step's dense output (kernels/kl_xrb.h), valid on [0, hdense] */
  double hdense;
  double ox, ov;        /* the last step taken (do_step): penetration and rate at its end, */
  double J, Jt[3];      /* normal impulse and friction impulse (world) */
} kl_csys;

/* Scratch of a data object; carved from its single allocation */
typedef struct kl_scratch {
  int nfeat_max, nfeat;
  kl_feature *feat;      /* (nfeat_max) */
  long feat_overflow, tri_overflow;
  int *tri;              /* (KL_TRI_CAP) */
  double *tri_q;         /* (KL_TRI_CAP x 3, with a mesh in the model) closest points of the sphere
                            query's triangles to its centre */
  int *tri_f;            /* (KL_TRI_CAP, idem) and their features (KL_TRI_FACE, ...) */
  double *sx, *sR;       /* (nshape x 3), (nshape x 9) world pose of each shape */
  double *R, *Iinv;      /* (nbody x 9) body rotation and world inverse inertia */
  double *acc;           /* (nbody x 12) impulse, angular impulse, moment, angular moment */
  double *A;             /* (ncon_max x ncon_max) contact-space inverse inertia */
  kl_csys *cs;           /* (ncon_max) */
  /* saved start of a sub-step (for the onset search) */
  double *s_xpos, *s_xquat, *s_vel, *s_angvel;
  /* inactive features present at the start (not counted as missed onsets) */
  kl_feature *pre;       /* (nfeat_max) */
  int npre;
  kl_feature *ended;     /* (ncon_max) contacts ended in this sub-step */
  int nended;
  double ended_t;        /* time at which the ended list was made */
  double *abound;        /* (nbody) bound on the external acceleration [m/s^2] */
  int *fused;            /* (nfeat_max) feature matched to an active contact */
  /* with a mesh in the model, per sphere shape (qc_of: its number among the spheres, -1 for other
   * shapes or without a mesh), KL_QC_WAYS slots: the triangles of mesh shape qc_mesh (-1: free slot)
   * within qc_r of qc_c, in the tree's order (qc_n of them, -1: more than KL_QC_CAP), reused while the
   * query's ball stays inside that one (collision_ccd.c); qc_p: the last query's centre, qc_u: the
   * running mean of the moves between queries */
  int *qc_of;            /* (nshape), set once when the data object is made */
  int nqc;               /* slots: nsphere x KL_QC_WAYS */
  int *qc_mesh, *qc_n;   /* (nsphere x KL_QC_WAYS) */
  double *qc_c, *qc_p;   /* (nsphere x KL_QC_WAYS x 3) */
  double *qc_r, *qc_u;   /* (nsphere x KL_QC_WAYS) */
  int *qc_tri;           /* (nsphere x KL_QC_WAYS x KL_QC_CAP) */
  /* the last narrow phase (kl_collide): the shapes' poses it saw, its margin, each pair's gap and the
   * overflow it counted; a call at the very same poses and margin (the next sub-step's start after an
   * accepted step: the state the onset check saw) takes its features as they are */
  double *lc_sx, *lc_sR;  /* (nshape x 3), (nshape x 9) */
  double *lc_gap;         /* (nshape x nshape) gap of pair (a, b) at a * nshape + b */
  double lc_margin;
  int lc_valid, lc_nfeat;
  long lc_tri_over, lc_feat_over;
  /* each body's external force and its rate at the sub-step's start (integrate.c: nbody x 6), used by
   * every step tried from that start */
  double *fext;
  double *snap;           /* (nbody x 3) the holder force's second derivative in the last step taken */
  /* the last anchor evaluated for the integrator (kl_world_anchor_at): body (-1: none), time, and its
   * position, velocity, acceleration, jerk, orientation and angular velocity */
  int anc_b;
  double anc_t, anc[19];
} kl_scratch;

/* world pose of every shape from the body state into S->sx, S->sR */
void kl_collide_pose(const kl_world_model *m, const kl_world_data *d, kl_scratch *S);

/* Narrow phase over all shape pairs: features with depth >= -margin into S->feat. For pairs that
 * have no active contact, *h_ca is lowered to a conservative-advancement time: no feature of the pair
 * can come within eps of touching before it, given the relative speed and the acceleration bounds
 * abound (nbody, [m/s^2]). Returns the number of features. */
int kl_collide(const kl_world_model *m, const kl_world_data *d, kl_scratch *S, double margin, double eps,
               const double *abound, double *h_ca);

/* rotation vector taking the frame qa to the frame qb, in qa's axes (|theta| <= pi) */
void kl_holder_rotvec(const double qa[4], const double qb[4], double th[3]);

/* The rotational holder of body b over a sub-step of h from t, backward Euler (world.c: stable at any
 * step, numerical damping about (w h)^2/2 per step): given the world inertia I and the angular momentum
 * L = I w0 plus the contacts' angular impulses, the angular velocity ws at the step's end, at which the
 * body turns over the step (the contacts' angular first moment is not added again), and L = I ws.
 * Returns 0 (nothing changed) if the body has no rotational holder. */
int kl_world_holder_rot_step(const kl_world_model *m, const kl_world_data *d, int b, double t, double h, const double I[9],
                             double L[3], double ws[3]);

/* d^2/dt^2 of the holder's force on body b at t (world) for the body's acceleration abody and jerk
 * jbody: K (a_anchor - abody) + D (jerk_anchor - jbody) along the anchor-frame axes */
void kl_world_holder_snap(const kl_world_model *m, const kl_world_data *d, int b, double t, const double abody[3],
                          const double jbody[3], double s[3]);

/* kl_world_anchor (and the jerk) through data d's one-entry memo: a sub-step asks for its start's
 * anchor several times (holder force, snap, rotational step, impulse record); the same body and time
 * give the same values without evaluating the trajectory again */
void kl_world_anchor_at(const kl_world_model *m, const kl_world_data *d, int b, double t, double pos[3], double vel[3],
                        double acc[3], double jerk[3], double quat[4], double angvel[3]);

/* support point of shape s in world direction dir (padding included): for tests and hull checks */
void kl_shape_support(const kl_world_model *m, const kl_scratch *S, int s, const double dir[3], double out[3]);

#endif
