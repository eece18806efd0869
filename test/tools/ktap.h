/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KTAP output for the test programs in test/tools: "KTAP version 1", one
 * "ok N name" / "not ok N name" line per test, "# " diagnostics, and the plan
 * "1..N" last (as test/vm/lib.sh prints it). The suite that runs a program
 * re-emits its results under its own numbering and treats a missing plan as
 * a crash. Header-only: every program includes it once.
 */
#ifndef SM_KTAP_H
#define SM_KTAP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* strcasestr */
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static int ktap_n, ktap_failed;

static inline void ktap_start(void)
{
	/* Line-buffered even into a pipe, so that a crash loses no result. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
}

/* ktap_result(pass, fmt, ...): one test; returns pass. */
static inline int __attribute__((format(printf, 2, 3)))
ktap_result(int pass, const char *fmt, ...)
{
	va_list ap;

	ktap_n++;
	if (!pass)
		ktap_failed++;
	printf("%sok %d ", pass ? "" : "not ", ktap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return pass;
}

static inline void __attribute__((format(printf, 2, 3)))
ktap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	ktap_n++;
	printf("ok %d ", ktap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", reason);
	fflush(stdout);
}

static inline void __attribute__((format(printf, 1, 2)))
ktap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The plan; the exit status of the program: 0 when nothing failed. */
static inline int ktap_finish(void)
{
	printf("1..%d\n", ktap_n);
	fflush(stdout);
	return ktap_failed ? 1 : 0;
}

static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Is the running kernel @major.@minor or newer? 0 if uname() fails. */
static inline int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

/* VmPin of this process in kB (its pinned memory), or -1. */
static inline long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * wait_for(ms, cond): poll @cond every 2 ms for at most @ms milliseconds
 * (a hang guard, never a measurement); true once @cond holds.
 */
#define wait_for(ms, cond) ({						\
	double __t0 = now_ms();						\
	int __ok;							\
	while (!(__ok = !!(cond)) && now_ms() - __t0 < (ms))		\
		usleep(2000);						\
	__ok;								\
})

/*
 * A hang guard for a wait on an event: @ms times SYNCMEM_SLOW (the suites'
 * factor for a slow guest). A bound, never a measurement.
 */
static inline int bound_ms(int ms)
{
	const char *slow = getenv("SYNCMEM_SLOW");
	int f = slow ? atoi(slow) : 1;

	return ms * (f > 0 ? f : 1);
}

/* Wait for child @pid for at most @ms (a hang guard): its wait status, or -1. */
static inline int wait_child(pid_t pid, int ms)
{
	int status = -1;

	if (!wait_for(ms, waitpid(pid, &status, WNOHANG) == pid))
		return -1;
	return status;
}

/*
 * Whether an extack message says why: it names one of the '|'-separated
 * words (case-insensitive), taken from the header's description of the
 * error. An empty message says nothing.
 */
static inline int says(const char *msg, const char *words)
{
	char w[64];
	const char *p = words, *e;

	if (!msg[0])
		return 0;
	for (;;) {
		e = strchr(p, '|');
		snprintf(w, sizeof(w), "%.*s", e ? (int)(e - p) : (int)strlen(p), p);
		if (strcasestr(msg, w))
			return 1;
		if (!e)
			return 0;
		p = e + 1;
	}
}

/* A negative errno by name ("-EINVAL"), or strerror() of it; "0" for 0. */
static inline const char *errstr(int negerr)
{
	static const struct { int e; const char *name; } names[] = {
		{ EPERM, "-EPERM" }, { ENOENT, "-ENOENT" }, { EIO, "-EIO" },
		{ ENXIO, "-ENXIO" }, { EBADF, "-EBADF" }, { EAGAIN, "-EAGAIN" },
		{ ENOMEM, "-ENOMEM" }, { EFAULT, "-EFAULT" }, { EBUSY, "-EBUSY" },
		{ ENODEV, "-ENODEV" }, { EINVAL, "-EINVAL" }, { ENOSPC, "-ENOSPC" },
		{ EPIPE, "-EPIPE" }, { ERANGE, "-ERANGE" }, { EPROTO, "-EPROTO" },
		{ EMSGSIZE, "-EMSGSIZE" }, { EOPNOTSUPP, "-EOPNOTSUPP" },
		{ ETIMEDOUT, "-ETIMEDOUT" }, { EINTR, "-EINTR" },
	};
	int e = negerr < 0 ? -negerr : negerr;
	size_t i;

	if (!negerr)
		return "0";
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	return strerror(e);
}

#endif /* SM_KTAP_H */
