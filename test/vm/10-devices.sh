#!/usr/bin/env bash
# The module attaches to RDMA devices through its ib_client: devices that
# exist before it loads, devices added and removed while it is loaded, and a
# clean unload, twice.
. "$(dirname "$0")/lib.sh"
suite_begin

check "load" sm_load
check "device present before load is listed" has_device rxe0
check "rdma link add rxe1" rdma link add rxe1 type rxe netdev veth1
check "added device is listed" has_device rxe1
check "rdma link delete rxe1" rdma link delete rxe1
check "deleted device is gone" lacks_device rxe1
check "other device still listed" has_device rxe0
check "rmmod" sm_unload
check "module gone after rmmod" unloaded ib_sync_mem
check "second load" sm_load
check "second load lists rxe0" has_device rxe0
check "second rmmod" sm_unload
finish
