/* config_dump.c — read, check and dump a configuration (pl_config_dump), for
 * config_keys.sh.  Usage: config_dump CONFIG.  Exit status 2 on bad input. */
#include <stdio.h>

#include "pl_config.h"
#include "pl_error.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: config_dump CONFIG\n");
        return 1;
    }
    pl_config cfg;
    pl_config_defaults(&cfg);
    int rc = pl_config_read(&cfg, argv[1]);
    if (rc == PL_OK) rc = pl_config_check(&cfg);
    if (rc == PL_OK) pl_config_dump(&cfg, stdout);
    else fprintf(stderr, "%s\n", pl_error_message());
    pl_config_destroy(&cfg);
    return rc == PL_OK ? 0 : rc == PL_ERR_INPUT ? 2 : 1;
}
