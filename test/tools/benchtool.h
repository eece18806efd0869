/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the userspace bench programs (train_loop, inbound_bench) share: die
 * with a message, the monotonic clock in ns, a zeroed mapping, a bounded
 * number from the command line. Header-only. The program defines
 * BENCH_PROG (its name, for messages) before it includes this, and
 * usage(), which bench_num() calls on a bad number.
 */
#ifndef SM_BENCHTOOL_H
#define SM_BENCHTOOL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static void usage(void);

/* Say what failed on stderr, after the results printed so far, and exit 1. */
static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, BENCH_PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* @len bytes of zeroed anonymous memory, every page there before a pin. */
static inline unsigned char *bench_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap of %zu bytes: %s", len, strerror(errno));
	memset(p, 0, len);
	return p;
}

/* @arg as a number from @min to @max; usage() if it is not one. */
static inline long bench_num(const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || end == arg || *end || v < min || v > max) {
		fprintf(stderr, BENCH_PROG ": %s: not a number from %ld to %ld\n",
			arg, min, max);
		usage();
	}
	return v;
}

#endif /* SM_BENCHTOOL_H */
