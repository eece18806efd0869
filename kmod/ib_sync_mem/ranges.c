// SPDX-License-Identifier: GPL-2.0
/*
 * Ranges of a client: the dirty spans a ranged lazy client keeps per
 * direction (struct sm_dirty_spans), so that its lazy sync calls
 * ->sync_range over what was marked and nothing more. (A range a caller
 * gives is checked by sm_range_check(), sync_mem.h.)
 *
 * Whether a sync is owed stays the generations' business (client.h): a
 * mark bumps its direction's generation and adds its span under the spans'
 * lock, so a sync that saw a generation and then takes the lock finds
 * every span marked up to it. Spans are only ever more than what is owed
 * (a merge, a span marked again after the sync copied it): never less.
 */
#include <linux/minmax.h>
#include <linux/spinlock.h>

#include "sync_mem.h"

/* Do spans @a and @b overlap or touch? */
static bool sm_span_joins(const struct sm_span *a, const struct sm_span *b)
{
	return a->start <= b->end && b->start <= a->end;
}

/*
 * Put @r into the @n spans of @v, sorted by start and disjoint, with room
 * for one more: it absorbs every span it joins (their generation too, the
 * newest kept). Return: how many spans @v has now.
 */
static unsigned int sm_span_put(struct sm_span *v, unsigned int n,
				struct sm_span r)
{
	unsigned int i, j;

	for (i = 0; i < n; ) {
		if (!sm_span_joins(&v[i], &r)) {
			i++;
			continue;
		}
		r.start = min(r.start, v[i].start);
		r.end = max(r.end, v[i].end);
		r.gen = max(r.gen, v[i].gen);
		for (j = i + 1; j < n; j++)
			v[j - 1] = v[j];
		n--;
	}
	/* Sorted by start; disjoint, so the rest are past @r. */
	for (i = n; i && v[i - 1].start > r.start; i--)
		v[i] = v[i - 1];
	v[i] = r;
	return n + 1;
}

/*
 * Add [@start, @end) with generation @gen to direction @d of @ds; past
 * SM_SPANS, the two nearest spans merge.
 */
static void sm_spans_add(struct sm_dirty_spans *ds, int d, u64 start,
			 u64 end, s64 gen)
{
	struct sm_span r = { .start = start, .end = end, .gen = gen };
	struct sm_span *v = ds->s[d];
	unsigned int i, j, n, near = 0;
	u64 gap, best = U64_MAX;

	n = sm_span_put(v, ds->n[d], r);
	if (n > SM_SPANS) {
		for (i = 0; i + 1 < n; i++) {
			gap = v[i + 1].start - v[i].end;
			if (gap < best) {
				best = gap;
				near = i;
			}
		}
		v[near].end = v[near + 1].end;
		v[near].gen = max(v[near].gen, v[near + 1].gen);
		for (j = near + 2; j < n; j++)
			v[j - 1] = v[j];
		n--;
	}
	ds->n[d] = n;
}

/**
 * sm_spans_mark() - mark [@start, @end) of a ranged lazy client dirty
 * @c: the client (c->spans set)
 * @dirs: BIT()s of the dirty directions
 * @start: first byte
 * @end: past the last byte
 *
 * Any context. Each direction's generation is bumped with a full barrier
 * (see ib_sync_mem_mark_dirty()), its span added under the same lock.
 */
void sm_spans_mark(struct ib_sync_mem_client *c, unsigned int dirs,
		   u64 start, u64 end)
{
	struct sm_dirty_spans *ds = c->spans;
	unsigned long flags;
	s64 gen;
	int d;

	spin_lock_irqsave(&ds->lock, flags);
	for (d = 0; d < SM_DIRTY_DIRS; d++) {
		if (!(dirs & BIT(d)))
			continue;
		gen = atomic64_inc_return(&c->lazy->dirty[d]);	/* ordered */
		sm_spans_add(ds, d, start, end, gen);
	}
	spin_unlock_irqrestore(&ds->lock, flags);
}

/**
 * sm_spans_owed() - the spans a lazy sync of @c in @dirs must cover
 * @c: a ranged lazy client a sync is owed in @dirs (sm_lazy_owed())
 * @dirs: BIT()s of the directions the sync covers
 * @cv: its cover; the generations are read already: the spans of every
 *	mark up to them (and maybe later ones) go to @cv->span
 */
void sm_spans_owed(struct ib_sync_mem_client *c, unsigned int dirs,
		   struct sm_cover *cv)
{
	struct sm_dirty_spans *ds = c->spans;
	unsigned long flags;
	unsigned int i;
	s64 clean;
	int d;

	cv->n = 0;
	cv->bytes = 0;
	spin_lock_irqsave(&ds->lock, flags);
	for (d = 0; d < SM_DIRTY_DIRS; d++) {
		if (!(dirs & BIT(d)))
			continue;
		clean = atomic64_read(&c->lazy->clean[d]);
		for (i = 0; i < ds->n[d]; i++)
			if (ds->s[d][i].gen > clean)
				cv->n = sm_span_put(cv->span, cv->n,
						    ds->s[d][i]);
	}
	spin_unlock_irqrestore(&ds->lock, flags);
	for (i = 0; i < cv->n; i++)
		cv->bytes += cv->span[i].end - cv->span[i].start;
}

/**
 * sm_spans_synced() - drop the spans a completed sync covered
 * @c: a ranged lazy client whose clean generations in @dirs moved on
 * @dirs: BIT()s of the directions
 */
void sm_spans_synced(struct ib_sync_mem_client *c, unsigned int dirs)
{
	struct sm_dirty_spans *ds = c->spans;
	unsigned long flags;
	unsigned int i, n;
	s64 clean;
	int d;

	spin_lock_irqsave(&ds->lock, flags);
	for (d = 0; d < SM_DIRTY_DIRS; d++) {
		if (!(dirs & BIT(d)))
			continue;
		clean = atomic64_read(&c->lazy->clean[d]);
		for (i = 0, n = 0; i < ds->n[d]; i++)
			if (ds->s[d][i].gen > clean)
				ds->s[d][n++] = ds->s[d][i];
		ds->n[d] = n;
	}
	spin_unlock_irqrestore(&ds->lock, flags);
}
