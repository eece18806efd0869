// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sync_mem counters: the client_timing parameter, the per-CPU counters
 * and histograms of clients, devices and the module (their sums, a new
 * maximum), and a pass's per-client results. What the sync paths inline
 * to count (sm_stats_add(), sm_acc_add()) is in client.h; a pass merges
 * its own once it ends (pass.c).
 */
#include <linux/jump_label.h>
#include <linux/module.h>

#include "client.h"

void sm_stats_sum(struct sm_stats __percpu *stats, struct sm_stats_sum *sum)
{
	int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct sm_stats *s = per_cpu_ptr(stats, cpu);

		sum->syncs += READ_ONCE(s->syncs);
		sum->errors += READ_ONCE(s->errors);
		sum->ns += READ_ONCE(s->ns);
		sum->bytes += READ_ONCE(s->bytes);
		sum->max_ns = max(sum->max_ns, READ_ONCE(s->max_ns));
		for (i = 0; i < SM_HIST_BUCKETS; i++)
			sum->hist[i] += READ_ONCE(s->hist[i]);
	}
}
EXPORT_SYMBOL_NS_GPL(sm_stats_sum, "IB_SYNC_MEM_INTERNAL");

/*
 * Per-client timing: a clock read after every ->sync, for the clients'
 * and domains' time counters and histograms and the per-client times of
 * a device sync's results. Off, no clock is read per client, except while
 * something is attached to the client_sync tracepoint, which still gets
 * every client's time.
 */
DEFINE_STATIC_KEY_TRUE(sm_timing_key);
EXPORT_SYMBOL_NS_GPL(sm_timing_key, "IB_SYNC_MEM_INTERNAL");

static int sm_set_timing(const char *val, const struct kernel_param *kp)
{
	bool on;
	int err = kstrtobool(val, &on);

	if (err)
		return err;
	if (on)
		static_branch_enable(&sm_timing_key);
	else
		static_branch_disable(&sm_timing_key);
	return 0;
}

static int sm_get_timing(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n",
			  static_key_enabled(&sm_timing_key) ? 'Y' : 'N');
}

static const struct kernel_param_ops sm_timing_ops = {
	.set = sm_set_timing,
	.get = sm_get_timing,
};

module_param_cb(client_timing, &sm_timing_ops, NULL, 0644);
MODULE_PARM_DESC(client_timing,
		 "Time every client's ->sync (counters, histograms, results; default Y)");

/* A new longest ->sync on this CPU (rare once warm: out of line). */
noinline void sm_stats_max(struct sm_stats __percpu *stats, u64 ns)
{
	unsigned long flags;
	struct sm_stats *s;

	/* A kind's fence callback may count from an interrupt (async.c). */
	local_irq_save(flags);
	s = this_cpu_ptr(stats);
	if (ns > s->max_ns)
		WRITE_ONCE(s->max_ns, ns);
	local_irq_restore(flags);
}

/**
 * sm_client_pass_result() - did a device-wide pass sync a client, how long
 *	and with what result
 * @client: the client
 * @pass: the pass (struct ib_sync_mem_result.pass)
 * @ns: set to the time of the client's ->sync in that pass
 * @err: set to what that ->sync returned (a later sync of the client, in
 *	another pass or alone, does not change it)
 *
 * Return: true if @pass is the last pass that synced @client on the CPU
 * it ran on; false if it did not sync @client, or a later pass did on the
 * same CPU.
 */
bool sm_client_pass_result(const struct ib_sync_mem_client *client, u64 pass,
			   u64 *ns, int *err)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct sm_stats *s = per_cpu_ptr(client->stats, cpu);

		if (READ_ONCE(s->last_pass) == pass) {
			*ns = READ_ONCE(s->last_pass_ns);
			*err = READ_ONCE(s->last_pass_err);
			return true;
		}
	}
	return false;
}
