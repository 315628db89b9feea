/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * own_suite.c - the conformance suite linked into a test binary of one's
 * own, as a third party does to certify a backend it builds in: the binary
 * hands its table to cwc_main and takes every option of cw-conformance but
 * --backend.
 *
 *   cc -o own_suite own_suite.c $(pkg-config --cflags --libs cwconformance)
 *   ./own_suite --certificate --json report.json
 *
 * The reference's deterministic backend stands in for the third party's.
 */
#include <cwconformance.h>
#include <cwrt/cwrt.h>

int main(int argc, char **argv)
{
    return cwc_main(argc, argv, cw_backend_deterministic());
}
