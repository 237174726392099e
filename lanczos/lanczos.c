/* lanczos.c — placeholder until the solver lands. */
#include "lanczos.h"
