/* hh.c — placeholder until the generator lands. */
#include "hh.h"
