/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * main.c - cw-conformance: the suite's command line (cli.c) with the
 * reference's backends available by name. `cw-conformance --help` lists
 * every option, exit status and environment variable.
 */
#include "cwconformance.h"

int main(int argc, char **argv)
{
    return cwc_main(argc, argv, NULL);
}
