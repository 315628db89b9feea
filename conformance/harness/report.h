/*
 * report.h - running the suite and reporting on it.
 */
#ifndef CWC_REPORT_H
#define CWC_REPORT_H

#define CWC_SUITE_VERSION "0.1.0"
#define CWC_SPEC_VERSION "0.1"

typedef struct cwc_options {
    const char *backend, *filter, *json, *tap, *xml;
    int list, requirements, certificate;
} cwc_options;

/* Print every case with its group, requirements and needed capabilities. */
int cwc_list(const cwc_options *opt);
/* Print every requirement of the spec with the cases that cover it; with a
 * backend run, their results. Non-zero if a requirement has no case. */
int cwc_print_requirements(const void *results);
/* Run the selected cases on cwc_backend and write the reports. */
int cwc_run_suite(const cwc_options *opt);

#endif
