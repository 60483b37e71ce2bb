#include "kl_impact.h"
__kernel void mb(int f, int iters, __global double *out){ int i=get_global_id(0);
 double acc=0, x=0.1+1e-7*(double)i;
 for(int k=0;k<iters;++k){ double y;
  if(f==0) y=1.0/(x+acc*1e-300); else if(f==1) y=sqrt(x+acc*1e-300); else if(f==2){int e; y=frexp(x+acc*1e-300,&e)+e;}
  else if(f==3) y=kl_log1p(x+acc*1e-300); else if(f==4) y=log1p(x+acc*1e-300); else if(f==5) y=kl_ginv_upper(x+acc*1e-300); else {double u; y=kl_ginv_lower(x+acc*1e-300,&u);}
  acc+=y; x+=0.37; if(x>3.0) x-=2.9; }
 out[i]=acc; }
