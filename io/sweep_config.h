/* io/sweep_config.h: the `kelvin sweep` inputs: the YAML config (a cartesian product of impact
 * parameters, through io/config.h) and the scenario CSV (through io/table.h), into an impact batch
 * (host/impact_batch.h). Messages name the file, line and field or column. */
#ifndef KL_IO_SWEEP_CONFIG_H
#define KL_IO_SWEEP_CONFIG_H

#include "host/impact_batch.h"
#include "io/config.h"

#define MAXP 50000000L   /* scenarios per sweep: 50e6 rows are ~6 GB of inputs and outputs */
#define MAXN 1000000L    /* values per parameter */
#define MAXSAMPLES 10000 /* samples per scenario */


/* The real parameters, their config keys and domains (kl_impact_check's, stated for people). */
enum { PM, PK, PN, PCR, PV0, PFE, PC, PN2, PREXP, NPAR }; /* PC, PN2, PREXP: the general law's */
typedef struct kl_sweep_pdef {
  const char *key;
  double lo, hi;   /* domain: lo < v (or lo <= v if lo_closed), v <= hi (or v < hi if hi_open) */
  int lo_closed, hi_open;
  double def;      /* default (single value; cr and v0 default to the ranges of kl_sweep_spec_default) */
  const char *defstr; /* the default as written in a config, for --help */
  const char *doc; /* what it is, for --help */
} kl_sweep_pdef;
extern const kl_sweep_pdef kl_sweep_pdefs[NPAR];

typedef struct kl_sweep_spec {
  int model[KL_NMODELS], nmodel;
  int law[5], nlaw;
  int rule[2], nrule;
  double *v[NPAR]; /* values of each parameter (malloc'd) */
  int nv[NPAR];
  int given[NPAR + 4]; /* which keys the config gave: parameters, then model, law, rule, samples */
  int samples;         /* M */
  char scenarios[4096]; /* CSV of scenarios instead of the product ("" if none) */
} kl_sweep_spec;

/* Free the value arrays of s. */
void kl_sweep_spec_free(kl_sweep_spec *s);
/* The built-in sweep (no config); -1 when out of memory. */
int kl_sweep_spec_default(kl_sweep_spec *s);
/* Fill s (holding the defaults) from the config file path, loaded into c; the message is on c. */
kelvin_status kl_sweep_load_spec(kl_cfg *c, const char *path, kl_sweep_spec *s);
/* The same from text in memory (fuzzing, tests). */
kelvin_status kl_sweep_load_spec_mem(kl_cfg *c, const char *name, const char *text, size_t len, kl_sweep_spec *s);
/* Rows of the cartesian product; -1 if above MAXP. */
long kl_sweep_product_size(const kl_sweep_spec *s);
/* Fill b with the product. */
void kl_sweep_fill_product(const kl_sweep_spec *s, kl_impact_batch *b);
/* Scenarios from a CSV file (see `kelvin sweep --help`) into a new batch with M samples each. */
kelvin_status kl_sweep_load_csv(const char *path, int M, kl_impact_batch **out, char *msg, size_t cap);
/* The same with progress (fn nullable): fn(ctx, -1, "reading FILE: N scenarios") every KL_SWEEP_READ_TICK
 * rows (the total is not known while reading); a nonzero return stops the read (KELVIN_ERR_STOPPED). */
#define KL_SWEEP_READ_TICK 65536
kelvin_status kl_sweep_load_csv_progress(const char *path, int M, kl_impact_batch **out, char *msg, size_t cap,
                                         kelvin_progress_fn fn, void *ctx);

#endif
