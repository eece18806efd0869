// SPDX-License-Identifier: GPL-2.0
/*
 * A C++ caller of libsyncmem: syncmem.h included as is (its extern "C"),
 * every public function named, so that the link resolves each of them
 * against the library, and the calls that need no module run. Built and
 * run by test/lib/check.sh (host tier): against the installed copy of the
 * library (pkg-config), shared and static.
 */
#include <syncmem.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace {

struct fn {
	const char *name;
	void (*addr)();
};

#define FN(f) fn{ #f, reinterpret_cast<void (*)()>(&f) }

const fn api[] = {
	FN(syncmem_open), FN(syncmem_close), FN(syncmem_errmsg), FN(syncmem_fd),
	FN(syncmem_region_create), FN(syncmem_dmabuf_create),
	FN(syncmem_client_own), FN(syncmem_client_delete),
	FN(syncmem_client_get), FN(syncmem_client_foreach),
	FN(syncmem_dev_index), FN(syncmem_kind_name), FN(syncmem_state_name),
	FN(syncmem_sync), FN(syncmem_sync_async), FN(syncmem_flush_inbound),
	FN(syncmem_flush_inbound_async), FN(syncmem_mark_dirty),
	FN(syncmem_sync_batch), FN(syncmem_sync_batch_async),
	FN(syncmem_sync_dev), FN(syncmem_fence_wait), FN(syncmem_fence_status),
	FN(syncmem_uring_prep_sync), FN(syncmem_uring_prep_batch),
	FN(syncmem_open_fd),
};

int failed;

void expect(bool ok, const char *what)
{
	std::printf("%s %s\n", ok ? "ok" : "FAILED", what);
	failed += !ok;
}

} // namespace

int main()
{
	unsigned int n = 0;

	for (const fn &f : api)
		n += f.addr != nullptr;
	std::printf("%u functions of syncmem.h resolved\n", n);
	expect(n == sizeof(api) / sizeof(api[0]), "every function resolved");
	expect(std::strcmp(syncmem_kind_name(SYNCMEM_KIND_REGION), "region") == 0,
	       "syncmem_kind_name(SYNCMEM_KIND_REGION) is \"region\"");
	expect(std::strcmp(syncmem_state_name(SYNCMEM_STATE_INVALIDATED), "invalidated") == 0,
	       "syncmem_state_name(SYNCMEM_STATE_INVALIDATED) is \"invalidated\"");
	expect(std::strcmp(syncmem_kind_name(99), "?") == 0, "an unknown kind is \"?\"");
	expect(syncmem_fence_status(-1) == -EBADF, "syncmem_fence_status(-1) is -EBADF");
	expect(syncmem_fence_wait(-1, 0) == -EBADF, "syncmem_fence_wait(-1) is -EBADF");
	syncmem_close(nullptr);
	expect(true, "syncmem_close(nullptr) does nothing");
	// The host never loads the module: no /dev/ib_sync_mem here.
	errno = 0;
	struct syncmem *sm = syncmem_open();
	expect(sm == nullptr && errno == ENOENT, "syncmem_open() without the module: NULL, ENOENT");
	if (sm)
		syncmem_close(sm);
	errno = 0;
	expect(syncmem_open_fd(-1) == nullptr && errno == EBADF,
	       "syncmem_open_fd(-1): NULL, EBADF");
	int p[2];
	expect(pipe(p) == 0, "a pipe");
	errno = 0;
	expect(syncmem_open_fd(p[0]) == nullptr && errno == ENOTTY,
	       "syncmem_open_fd() of a pipe: NULL, ENOTTY");
	expect(fcntl(p[0], F_GETFD) >= 0, "... and the pipe is left open");
	close(p[0]);
	close(p[1]);
	expect(syncmem_uring_prep_sync(nullptr, nullptr, 1, SYNCMEM_INBOUND, 0, 0, 0, -1) == -EINVAL,
	       "syncmem_uring_prep_sync() without an SQE is -EINVAL");
	expect(SYNCMEM_URING_SQE_SIZE == 128, "SYNCMEM_URING_SQE_SIZE is 128");
	syncmem_entry e = {};
	expect(sizeof(e) == 24, "struct syncmem_entry is 24 bytes");
	return failed ? 1 : 0;
}
