// SPDX-License-Identifier: GPL-2.0
/*
 * Ranges of a client: checking one a caller gives, and the dirty spans a
 * ranged lazy client keeps per direction (struct sm_dirty_spans), so that
 * its lazy sync calls ->sync_range over what was marked and nothing more.
 *
 * Whether a sync is owed stays the generations' business (client.c): a
 * mark bumps its direction's generation and adds its span under the spans'
 * lock, so a sync that saw a generation and then takes the lock finds
 * every span marked up to it. Spans are only ever more than what is owed
 * (a merge, a span marked again after the sync copied it): never less.
 */
#include <linux/minmax.h>
#include <linux/spinlock.h>

#include "sync_mem.h"

/**
 * sm_range_check() - may @c be synced or marked over [@offset, +@len)?
 * @c: the client
 * @offset: first byte
 * @len: bytes
 *
 * Return: 0; -EINVAL for no length, or a start or end off the client's
 * range alignment (the client's end is always a valid end); -ERANGE for
 * a range that does not lie inside the client.
 */
int sm_range_check(const struct ib_sync_mem_client *c, u64 offset, u64 len)
{
	u64 end;

	if (!len)
		return -EINVAL;
	if (check_add_overflow(offset, len, &end) || end > c->size)
		return -ERANGE;
	if (!IS_ALIGNED(offset, c->range_align) ||
	    (!IS_ALIGNED(end, c->range_align) && end != c->size))
		return -EINVAL;
	return 0;
}

/* Do spans @a and @b overlap or touch? */
static bool sm_span_joins(const struct sm_span *a, const struct sm_span *b)
{
	return a->start <= b->end && b->start <= a->end;
}

/*
 * Add [@start, @end) with generation @gen to direction @d of @ds: it
 * absorbs every span it joins; past SM_SPANS, the two nearest spans merge.
 */
static void sm_spans_add(struct sm_dirty_spans *ds, int d, u64 start,
			 u64 end, s64 gen)
{
	struct sm_span r = { .start = start, .end = end };
	unsigned int i, j, n = ds->n[d], near = 0;
	u64 gap, best = U64_MAX;

	for (i = 0; i < n; ) {
		if (!sm_span_joins(&ds->s[d][i].r, &r)) {
			i++;
			continue;
		}
		r.start = min(r.start, ds->s[d][i].r.start);
		r.end = max(r.end, ds->s[d][i].r.end);
		for (j = i + 1; j < n; j++)
			ds->s[d][j - 1] = ds->s[d][j];
		n--;
	}
	/* Sorted by start; disjoint, so the rest are past @r. */
	for (i = n; i && ds->s[d][i - 1].r.start > r.start; i--)
		ds->s[d][i] = ds->s[d][i - 1];
	ds->s[d][i].r = r;
	ds->s[d][i].gen = gen;
	n++;
	if (n > SM_SPANS) {
		for (i = 0; i + 1 < n; i++) {
			gap = ds->s[d][i + 1].r.start - ds->s[d][i].r.end;
			if (gap < best) {
				best = gap;
				near = i;
			}
		}
		ds->s[d][near].r.end = ds->s[d][near + 1].r.end;
		ds->s[d][near].gen = max(ds->s[d][near].gen,
					 ds->s[d][near + 1].gen);
		for (j = near + 2; j < n; j++)
			ds->s[d][j - 1] = ds->s[d][j];
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
		gen = atomic64_inc_return(&c->dirty[d]);	/* ordered */
		sm_spans_add(ds, d, start, end, gen);
	}
	spin_unlock_irqrestore(&ds->lock, flags);
}

/*
 * Put @r into @cv's spans, sorted and disjoint (joining spans merge). The
 * caller's spans come sorted per direction; two directions interleave.
 */
static void sm_cover_add(struct sm_cover *cv, struct sm_span r)
{
	unsigned int i, j;

	for (i = 0; i < cv->n; ) {
		if (!sm_span_joins(&cv->span[i], &r)) {
			i++;
			continue;
		}
		r.start = min(r.start, cv->span[i].start);
		r.end = max(r.end, cv->span[i].end);
		for (j = i + 1; j < cv->n; j++)
			cv->span[j - 1] = cv->span[j];
		cv->n--;
	}
	for (i = cv->n; i && cv->span[i - 1].start > r.start; i--)
		cv->span[i] = cv->span[i - 1];
	cv->span[i] = r;
	cv->n++;
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
		clean = atomic64_read(&c->clean[d]);
		for (i = 0; i < ds->n[d]; i++)
			if (ds->s[d][i].gen > clean)
				sm_cover_add(cv, ds->s[d][i].r);
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
		clean = atomic64_read(&c->clean[d]);
		for (i = 0, n = 0; i < ds->n[d]; i++)
			if (ds->s[d][i].gen > clean)
				ds->s[d][n++] = ds->s[d][i];
		ds->n[d] = n;
	}
	spin_unlock_irqrestore(&ds->lock, flags);
}
