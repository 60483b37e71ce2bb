/* io/table.h: the grinding problem's CSV inputs: a path as points and normals, a target force profile.
 * Messages name the file, line and column. */
#ifndef KL_IO_TABLE_H
#define KL_IO_TABLE_H

#include "kelvin/kelvin.h"

/* Path rows x,y,z,nx,ny,nz (a header line names the columns, in any order): *npt points into malloc'd
 * (npt x 3) arrays *pts [m] and *nrms (unit normals). At least 2 rows. KELVIN_ERR_CONFIG or
 * KELVIN_ERR_NOMEM with a message; the arrays are NULL on failure. */
kelvin_status kl_read_path_csv(const char *path, int *npt, double **pts, double **nrms, char *msg, int cap);

/* Target rows s,force (an optional header line): *n samples into malloc'd *s [m] (increasing) and *F [N]
 * (> 0). KELVIN_ERR_CONFIG or KELVIN_ERR_NOMEM with a message; the arrays are NULL on failure. */
kelvin_status kl_read_target_csv(const char *path, int *n, double **s, double **F, char *msg, int cap);

#endif
