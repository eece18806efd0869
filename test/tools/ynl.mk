# The ib_sync_mem family's C library as the kernel makes one: ynl-gen-c.py
# --mode user run on spec/ib_sync_mem.yaml, and libynl (lib/ynl.c), both
# from tools/net/ynl of linux-source-6.12 (unpacked outside the checkout by
# vm/ynl-tree.sh; nothing of it is copied into the repository). Included by
# the top-level Makefile; everything it makes is in build/ynl:
#
#   ib_sync_mem-user.h, .c   generated from the spec
#   lib/ynl.h, ynl-priv.h, ynl.c   libynl, copied from the tree
#   libynl.a                 ynl.o and ib_sync_mem-user.o, as the kernel's
#                            tools/net/ynl/Makefile packs them
#
# Every C tool links libynl.a: the family's client the tools share
# (test/tools/smnl.c) is written on it, and the canaries' receive paths
# call it themselves (test/tools/smynl.h); `make ynl` makes the library
# alone.

YNL_OUT := build/ynl
YNL_LIB := $(YNL_OUT)/libynl.a
YNL_GEN_H := $(YNL_OUT)/ib_sync_mem-user.h
YNL_GEN_C := $(YNL_OUT)/ib_sync_mem-user.c
YNL_LIB_FILES := $(addprefix $(YNL_OUT)/lib/,ynl.c ynl.h ynl-priv.h)
# Debian's python3: it has python3-yaml and python3-jsonschema.
YNL_PY ?= /usr/bin/python3
# ynl-gen-c.py wants the kernel's layout (as test/packaging/spec-check.sh
# gives it): the spec in Documentation/netlink/specs, its schema one level
# up, a MAINTAINERS file at the root.
YNL_K := $(YNL_OUT)/k
YNL_SPEC := $(YNL_K)/Documentation/netlink/specs/ib_sync_mem.yaml

# The kernel's generated code and libynl, with the tools' warnings as
# errors but one: -Wno-unused-parameter, as the kernel's own
# tools/net/ynl Makefiles build them (the generated *_free() of a nest
# without pointers ignores its argument; so does lib/ynl.c's ynl_cb_null()).
# The UAPI header has no *_NTF enumerators: the events client-new-ntf and
# client-del-ntf share the requests' command numbers (the spec's header
# comment), and the generated tables name them so.
YNL_CFLAGS = $(TOOLS_CFLAGS) -Wno-unused-parameter \
	-I$(YNL_OUT) -I$(YNL_OUT)/lib -Ikmod/include/uapi \
	-DIB_SYNC_MEM_CMD_CLIENT_NEW_NTF=IB_SYNC_MEM_CMD_CLIENT_NEW \
	-DIB_SYNC_MEM_CMD_CLIENT_DEL_NTF=IB_SYNC_MEM_CMD_CLIENT_DEL

.PHONY: ynl
ynl: $(YNL_LIB) $(YNL_GEN_H)
tools: ynl

$(YNL_SPEC): spec/ib_sync_mem.yaml
	@tree=$$(vm/ynl-tree.sh) && mkdir -p $(@D) && \
		ln -sfn "$$tree/Documentation/netlink/genetlink-c.yaml" $(YNL_K)/Documentation/netlink/ && \
		touch $(YNL_K)/MAINTAINERS && cp $< $@

$(YNL_GEN_H): $(YNL_SPEC) test/tools/ynl.mk
	@tree=$$(vm/ynl-tree.sh) && \
		$(YNL_PY) "$$tree/tools/net/ynl/ynl-gen-c.py" --mode user --header \
		--spec $(YNL_SPEC) -o $@

$(YNL_GEN_C): $(YNL_SPEC) test/tools/ynl.mk
	@tree=$$(vm/ynl-tree.sh) && \
		$(YNL_PY) "$$tree/tools/net/ynl/ynl-gen-c.py" --mode user --source \
		--spec $(YNL_SPEC) -o $@

$(YNL_LIB_FILES):
	@tree=$$(vm/ynl-tree.sh) && mkdir -p $(@D) && \
		cp "$$tree/tools/net/ynl/lib/$(@F)" $@

$(YNL_OUT)/ynl.o: $(YNL_LIB_FILES)
	$(TOOLS_CC) $(YNL_CFLAGS) -c -o $@ $(YNL_OUT)/lib/ynl.c

$(YNL_OUT)/ib_sync_mem-user.o: $(YNL_GEN_C) $(YNL_GEN_H) $(YNL_LIB_FILES) \
		kmod/include/uapi/linux/ib_sync_mem.h
	$(TOOLS_CC) $(YNL_CFLAGS) -c -o $@ $<

$(YNL_LIB): $(YNL_OUT)/ynl.o $(YNL_OUT)/ib_sync_mem-user.o
	rm -f $@ && ar rcs $@ $^

# The tools' rule (Makefile) with the library: its headers, and the archive
# last on the command line (TOOLS_LDLIBS).
$(TOOLS): $(YNL_LIB) $(YNL_GEN_H)
$(TOOLS): private TOOLS_CFLAGS += -I$(YNL_OUT) -I$(YNL_OUT)/lib
$(TOOLS): private TOOLS_LDLIBS += $(YNL_LIB)
