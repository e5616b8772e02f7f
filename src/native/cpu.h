/* What the CPU offers, asked once per process through CPUID. */
#ifndef WORKSNAP_CPU_H
#define WORKSNAP_CPU_H

/* 1 when the x86 SHA extensions (with the SSSE3 and SSE4.1 they are used with) are there; 0 elsewhere. */
int cpu_has_sha_ni(void);

#endif
