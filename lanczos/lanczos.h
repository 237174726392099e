#ifndef LANCZOS_H
#define LANCZOS_H
#include "spmv.h"
#endif
