# libsyncmem (lib/): the C library of syncmem.h, for C and C++ callers.
# Included by the top-level Makefile; everything it makes is in build/lib:
#
#   libsyncmem.so.0.3.0   the shared library, SONAME libsyncmem.so.0, its
#                         exports those of lib/libsyncmem.map only
#   libsyncmem.so.0, libsyncmem.so   its links
#   libsyncmem.a          the static library: one object, every symbol
#                         but the public API's made local
#   syncmem.pc            pkg-config, for PREFIX
#
# Both hold the library's sources (lib/*.c), libynl and the code the
# kernel's YNL generator makes of spec/ib_sync_mem.yaml (test/tools/ynl.mk
# generates it), all built here again as position-independent code with
# hidden visibility: a caller sees syncmem_*() and nothing of YNL, and may
# link YNL's own libraries beside it.
#
#   make lib                    build it
#   make install-lib            install it: PREFIX (/usr/local), DESTDIR,
#                               LIBDIR, INCLUDEDIR, MANDIR; the runtime part
#                               and the development part alone:
#   make install-lib-runtime    the shared library and its SONAME link
#   make install-lib-dev        syncmem.h, libsyncmem.so, libsyncmem.a,
#                               syncmem.pc, the section 3 man pages
#   make uninstall-lib          the same files removed
#   make abi-dump               lib/abi/libsyncmem.abi written again
#                               (lib/abi-check.sh: the ABI check)

LIB_OUT := build/lib
LIB_SOVER := 0
LIB_VERSION := 0.3.0
LIB_SONAME := libsyncmem.so.$(LIB_SOVER)
LIB_SO := $(LIB_OUT)/libsyncmem.so.$(LIB_VERSION)
LIB_A := $(LIB_OUT)/libsyncmem.a
LIB_PC := $(LIB_OUT)/syncmem.pc
LIB_MAP := lib/libsyncmem.map
LIB_HDR := lib/include/syncmem.h
LIB_SRCS := lib/nl.c lib/dev.c lib/uring.c
LIB_MAN3 := $(wildcard docs/man/*.3)

# The library's own sources with the tools' warnings as errors; libynl and
# the generated code as ynl.mk builds them (-Wno-unused-parameter), and
# every object PIC, hidden, with its debug information (abidw reads it).
LIB_BASE_CFLAGS = $(TOOLS_CFLAGS) -g -fPIC -fvisibility=hidden \
	-I$(YNL_OUT) -I$(YNL_OUT)/lib -Ikmod/include/uapi \
	-DIB_SYNC_MEM_CMD_CLIENT_NEW_NTF=IB_SYNC_MEM_CMD_CLIENT_NEW \
	-DIB_SYNC_MEM_CMD_CLIENT_DEL_NTF=IB_SYNC_MEM_CMD_CLIENT_DEL
LIB_OBJS := $(patsubst lib/%.c,$(LIB_OUT)/obj/%.o,$(LIB_SRCS)) \
	$(LIB_OUT)/obj/ynl.o $(LIB_OUT)/obj/ib_sync_mem-user.o

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man

.PHONY: lib install-lib install-lib-runtime install-lib-dev uninstall-lib \
	lib-files-runtime lib-files-dev abi-dump

lib: $(LIB_SO) $(LIB_OUT)/libsyncmem.so $(LIB_A) $(LIB_PC)

$(LIB_OUT)/obj/%.o: lib/%.c lib/priv.h $(LIB_HDR) $(YNL_GEN_H) $(YNL_LIB_FILES) \
		$(wildcard kmod/include/uapi/linux/*.h)
	@mkdir -p $(@D)
	$(TOOLS_CC) $(LIB_BASE_CFLAGS) -Ilib -Ilib/include -c -o $@ $<

$(LIB_OUT)/obj/ynl.o: $(YNL_LIB_FILES)
	@mkdir -p $(@D)
	$(TOOLS_CC) $(LIB_BASE_CFLAGS) -Wno-unused-parameter -c -o $@ $(YNL_OUT)/lib/ynl.c

$(LIB_OUT)/obj/ib_sync_mem-user.o: $(YNL_GEN_C) $(YNL_GEN_H) $(YNL_LIB_FILES)
	@mkdir -p $(@D)
	$(TOOLS_CC) $(LIB_BASE_CFLAGS) -Wno-unused-parameter -c -o $@ $(YNL_GEN_C)

# -z defs: nothing left undefined but libc's.
$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	$(TOOLS_CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=$(LIB_MAP) \
		-Wl,-z,defs -Wl,-z,relro -Wl,-z,now -o $@ $(LIB_OBJS)

$(LIB_OUT)/$(LIB_SONAME): $(LIB_SO)
	ln -sf $(<F) $@

$(LIB_OUT)/libsyncmem.so: $(LIB_OUT)/$(LIB_SONAME)
	ln -sf $(<F) $@

# One relocatable object of everything, its hidden symbols made local.
$(LIB_A): $(LIB_OBJS)
	ld -r -o $(LIB_OUT)/obj/libsyncmem-all.o $(LIB_OBJS)
	objcopy --localize-hidden $(LIB_OUT)/obj/libsyncmem-all.o
	rm -f $@ && ar rcs $@ $(LIB_OUT)/obj/libsyncmem-all.o

# pkg-config of PREFIX (install-lib writes its own of its PREFIX).
define lib_pc
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(LIB_VERSION)|' \
		lib/syncmem.pc.in > $(1)
endef
$(LIB_PC): lib/syncmem.pc.in lib/lib.mk
	@mkdir -p $(@D)
	$(call lib_pc,$@)

# The files each part installs, one path a line (packaging/install.sh
# lists them in its manifest).
lib-files-runtime:
	@echo $(LIBDIR)/libsyncmem.so.$(LIB_VERSION)
	@echo $(LIBDIR)/$(LIB_SONAME)

lib-files-dev:
	@echo $(INCLUDEDIR)/syncmem.h
	@echo $(LIBDIR)/libsyncmem.so
	@echo $(LIBDIR)/libsyncmem.a
	@echo $(LIBDIR)/pkgconfig/syncmem.pc
	@for f in $(LIB_MAN3); do echo $(MANDIR)/man3/$${f##*/}; done

install-lib: install-lib-runtime install-lib-dev

install-lib-runtime: lib
	install -d $(DESTDIR)$(LIBDIR)
	install -m 644 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sfn libsyncmem.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)

install-lib-dev: lib
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man3
	install -m 644 $(LIB_HDR) $(DESTDIR)$(INCLUDEDIR)/
	ln -sfn $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libsyncmem.so
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(call lib_pc,$(DESTDIR)$(LIBDIR)/pkgconfig/syncmem.pc)
	install -m 644 $(LIB_MAN3) $(DESTDIR)$(MANDIR)/man3/

uninstall-lib:
	@$(MAKE) -s --no-print-directory lib-files-runtime lib-files-dev | \
		while read -r f; do rm -f "$(DESTDIR)$$f"; done

# The ABI baseline, written again from the library just built: commit it
# with the change that alters the ABI, on purpose (lib/abi-check.sh).
abi-dump: $(LIB_SO)
	abidw --no-corpus-path --no-show-locs --drop-private-types --headers-dir lib/include --out-file lib/abi/libsyncmem.abi $(LIB_SO)
