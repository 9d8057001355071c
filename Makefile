# mcpd: build, run and test the suite.  See README.md.
#
#   make            build everything into build/ (build-san/ with SANITIZE=1)
#   make run        install missing packages (as root), build, start the suite
#   make languages  install what every language of the built-in table needs
#                   (as root; otherwise print the apt-get line)
#   make check      install missing packages (as root), build, run every test
#   make vm-check   only the VM test: the suite installed in a Debian guest
#                   under QEMU (VM_DIST, VM_CGROUP: see tests/vm/vm.sh)
#   make vm-shell   boot that guest, with this tree shared, for a person
#   make images     build the data and polyglot images (as root) for make run
#   make fuzz       build the libFuzzer targets with clang and run each for
#                   FUZZ_TIME seconds (FUZZ_TARGETS: a subset)
#   make fuzz-merge minimize what the runs found into tests/fuzz/corpus
#   make install    install under $(DESTDIR)$(PREFIX)
#   make clean      remove build outputs

PREFIX		?= /usr/local
SBINDIR		?= $(PREFIX)/sbin
BINDIR		?= $(PREFIX)/bin
LIBEXECDIR	?= $(PREFIX)/libexec
MANDIR		?= $(PREFIX)/share/man
SYSCONFDIR	?= /etc
LOCALSTATEDIR	?= /var
UNITDIR		?= /lib/systemd/system
SYSUSERSDIR	?= /usr/lib/sysusers.d
TMPFILESDIR	?= /usr/lib/tmpfiles.d

CC		?= cc
BISON		?= bison
PKG_CONFIG	?= pkg-config
PKGS		:= libevent libevent_openssl openssl jansson sqlite3 libseccomp \
		   libcap-ng libsodium

ifeq ($(SANITIZE),1)
B		:= build-san
SANFLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
		   -fno-omit-frame-pointer
OPTFLAGS	?= -O1 -g
else
B		:= build
SANFLAGS	:=
OPTFLAGS	?= -O2 -g
endif

WARNFLAGS	:= -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wpointer-arith \
		   -Wstrict-prototypes -Wmissing-prototypes -Wwrite-strings \
		   -Wvla -Wimplicit-fallthrough -Wno-unused-parameter
HARDFLAGS	:= -fstack-protector-strong -fPIE -D_FORTIFY_SOURCE=2 \
		   -fno-strict-aliasing
DEFS		:= -D_GNU_SOURCE -DSYSCONFDIR='"$(SYSCONFDIR)"' \
		   -DLIBEXECDIR='"$(LIBEXECDIR)"' \
		   -DLOCALSTATEDIR='"$(LOCALSTATEDIR)"'

# pkg-config is asked once; a missing library is named rather than left to
# surface as a missing header.
PKG_MISSING	:= $(shell for p in $(PKGS); do $(PKG_CONFIG) --exists $$p || \
		   echo $$p; done 2>/dev/null)
PKG_CFLAGS	:= $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS	:= $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

# Each layer sees the headers of the layers below it and its own: common/
# only its own (tests/docs/layers.sh checks every folder's sources).
INCS		= -Icommon -Ipolicy -I$(B)
ALL_CFLAGS	= -std=gnu11 $(OPTFLAGS) $(WARNFLAGS) $(HARDFLAGS) $(SANFLAGS) \
		  $(DEFS) $(INCS) $(PKG_CFLAGS) $(CFLAGS)
# Each program records only the libraries it uses (OpenSSL: mcpd's).
ALL_LDFLAGS	= -pie -Wl,-z,relro,-z,now -Wl,--as-needed $(SANFLAGS) \
		  $(LDFLAGS)

COMMON_SRCS	:= $(wildcard common/*.c)
POLICY_SRCS	:= $(wildcard policy/*.c)
MCPD_SRCS	:= $(wildcard mcpd/*.c)
SANDBOXD_SRCS	:= $(wildcard sandboxd/*.c)
AUDITD_SRCS	:= $(wildcard auditd/*.c)
MCPCTL_SRCS	:= $(wildcard auditd/mcpctl/*.c)
UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
TOOL_SRCS	:= $(wildcard tests/tools/*.c)

obj		= $(patsubst %.c,$(B)/obj/%.o,$(1))

# The layers every program links, the upper first: policy/ uses common/.
LIBCOMMON	:= $(B)/libcommon.a
LIBPOLICY	:= $(B)/libpolicy.a
LIBMCPD		:= $(LIBPOLICY) $(LIBCOMMON)
PROGS		:= $(B)/mcpd $(B)/mcp-sandboxd $(B)/mcp-auditd \
		   $(B)/mcpctl $(B)/sandbox-init $(B)/mcpd-conformance
INIT_SRCS	:= $(wildcard sandboxd/init/*.c) common/imsg.c common/proto.c
UNITS		:= $(wildcard systemd/*.service systemd/*.socket)
UNIT_TESTS	:= $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
TOOLS		:= $(patsubst tests/tools/%.c,$(B)/tests/%,$(TOOL_SRCS))

# Fuzz targets: tests/fuzz/fuzz_<name>.c, each with the daemon sources it
# reaches (their main() left out).  make check replays their corpus and
# regression inputs through a plain main() (tests/fuzz/replay.c) built
# like any test; make fuzz builds them with clang and libFuzzer apart,
# in build-fuzz/.
FUZZ_ALL	:= imsg sandboxd auditd jsonrpc http config init ws jwt share
FUZZ_TARGETS	?= $(FUZZ_ALL)
FUZZ_TIME	?= 60
FZ		:= build-fuzz
FUZZ_MCPD	:= $(filter-out mcpd/mcpd.c mcpd/main.c,$(MCPD_SRCS)) \
		   tests/fuzz/mcpdfuzz.c \
		   auditd/record.c
FUZZ_SRCS_imsg	:=
FUZZ_SRCS_sandboxd := $(filter-out sandboxd/sandboxd.c,$(SANDBOXD_SRCS))
FUZZ_SRCS_auditd := $(filter-out auditd/auditd.c,$(AUDITD_SRCS))
FUZZ_SRCS_jsonrpc := $(FUZZ_MCPD)
FUZZ_SRCS_http	:= $(FUZZ_MCPD)
FUZZ_SRCS_config :=
FUZZ_SRCS_init	:= sandboxd/init/shword.c sandboxd/init/scfilter.c
FUZZ_SRCS_ws	:= mcpd/ws.c mcpd/content.c
FUZZ_SRCS_jwt	:= mcpd/jwt.c
FUZZ_SRCS_share	:= mcpd/share.c
FUZZ_REPLAYS	:= $(patsubst %,$(B)/fuzz/%,$(FUZZ_ALL))

# No object is an intermediate to delete: the next run reads its .d file,
# which names it, and would build it again.
.SECONDARY:

.PHONY: all deps deps-run deps-check deps-fuzz run check vm-check vm-shell \
	bench images languages install uninstall clean pkgcheck fuzz \
	fuzz-build fuzz-merge fuzz-seeds fuzz-seeds-jwt fuzz-seeds-share
.DEFAULT_GOAL := all

all: pkgcheck $(PROGS) $(UNIT_TESTS) $(TOOLS) $(FUZZ_REPLAYS)

pkgcheck:
ifneq ($(strip $(PKG_MISSING)),)
	@echo "missing libraries: $(PKG_MISSING)" >&2
	@echo "run 'make deps' as root, or see README.md" >&2
	@exit 1
endif

deps:
	@sh scripts/deps.sh build
deps-run:
	@sh scripts/deps.sh run
deps-check:
	@sh scripts/deps.sh check
deps-fuzz:
	@sh scripts/deps.sh fuzz
# make run offers the languages the host has; this adds the rest.
languages:
	@sh scripts/deps.sh languages

# The deps step runs in a sub-make first, so that the build that follows
# sees the libraries it may just have installed.
run: deps-run
	@$(MAKE) --no-print-directory all
	@B=$(B) bash scripts/run.sh

check: deps-check
	@$(MAKE) --no-print-directory all
	@B=$(B) sh tests/run.sh

# The VM test alone (it builds its own tree for the guest, whatever B is),
# forced even with SANITIZE=1.
vm-check: deps-check
	@B=$(B) TESTS=vm VM_CHECK=1 sh tests/run.sh

vm-shell: deps-check
	@B=$(B) TOP=$(CURDIR) bash tests/vm/vm.sh --shell

# The larger image presets, into the state directory make run serves;
# minutes and gigabytes, so not part of check (which builds a minimal one).
images: deps-run
	@$(MAKE) --no-print-directory all
	@B=$(B) bash scripts/images.sh

# Benchmarks print tables; they are not tests and assert nothing.
bench: deps-check
	@$(MAKE) --no-print-directory all
	@for b in tests/bench/*.sh; do \
		[ "$$b" = tests/bench/lib.sh ] || B=$(B) bash $$b || exit 1; \
	done

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/parse.c: policy/parse.y
	@mkdir -p $(B)
	$(BISON) -o $@ $<

$(B)/obj/parse.o: $(B)/parse.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -MMD -MP -c -o $@ $<

$(call obj,$(COMMON_SRCS)): INCS = -Icommon

$(LIBCOMMON): $(call obj,$(COMMON_SRCS))
	rm -f $@
	ar rcs $@ $^

$(LIBPOLICY): $(B)/obj/parse.o $(call obj,$(POLICY_SRCS))
	rm -f $@
	ar rcs $@ $^

LIBS		= $(LIBMCPD) $(PKG_LIBS)

$(B)/mcpd: $(call obj,$(MCPD_SRCS)) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(call obj,$(MCPD_SRCS)) $(LIBS)

# The conformance suite's fixtures live only in this test build of mcpd:
# mcpd's objects but main.c, and the fixtures with a main() that
# registers them (tests/interop/fixture.c).  Never installed.
CONF_OBJS	= $(call obj,$(filter-out mcpd/main.c,$(MCPD_SRCS)) \
		  tests/interop/fixture.c)

$(B)/mcpd-conformance: $(CONF_OBJS) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CONF_OBJS) $(LIBS)

$(B)/mcp-sandboxd: $(call obj,$(SANDBOXD_SRCS)) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(call obj,$(SANDBOXD_SRCS)) $(LIBS)

$(B)/mcp-auditd: $(call obj,$(AUDITD_SRCS)) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(call obj,$(AUDITD_SRCS)) $(LIBS)

MCPCTL_OBJS	= $(call obj,$(MCPCTL_SRCS))

$(B)/mcpctl: $(MCPCTL_OBJS) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(MCPCTL_OBJS) $(LIBS)

# PID 1 of every container: static, so it needs nothing from the image,
# and never sanitized, since it runs inside the sandbox.
$(B)/sandbox-init: $(INIT_SRCS) $(wildcard sandboxd/init/*.h) common/imsg.h \
    common/proto.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g $(WARNFLAGS) -fstack-protector-strong \
	    -D_FORTIFY_SOURCE=2 -D_GNU_SOURCE -Icommon -static \
	    -o $@ $(INIT_SRCS)

# A unit test or test tool links its own object and any daemon objects
# listed as extra prerequisites below.
$(B)/tests/%: $(B)/obj/tests/unit/%.o $(LIBMCPD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS)

$(B)/tests/test_bundle: $(call obj,sandboxd/bundle.c sandboxd/image.c)
$(B)/tests/test_outlog: $(call obj,sandboxd/outlog.c)
$(B)/tests/test_shword: $(call obj,sandboxd/init/shword.c)
$(B)/tests/test_mcpctl: $(call obj,auditd/mcpctl/body.c auditd/mcpctl/filter.c)
$(B)/tests/test_ws: $(call obj,mcpd/ws.c mcpd/content.c)
$(B)/tests/test_jwt: $(call obj,mcpd/jwt.c)
$(B)/tests/test_share: $(call obj,mcpd/share.c)
$(B)/tests/mkbundle: $(call obj,sandboxd/bundle.c sandboxd/image.c)

$(B)/tests/%: $(B)/obj/tests/tools/%.o $(LIBMCPD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS)

# A fuzz target's replay program.
.SECONDEXPANSION:
$(B)/fuzz/%: $(B)/obj/tests/fuzz/fuzz_%.o $(B)/obj/tests/fuzz/replay.o \
    $(B)/obj/tests/fuzz/fuzzlib.o $$(call obj,$$(FUZZ_SRCS_$$*)) $(LIBMCPD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS)

# The binary seeds, made from proto.h's structs: rerun after a change to it.
$(B)/tests/mkseeds: $(B)/obj/tests/fuzz/mkseeds.o $(LIBMCPD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS)

# The jwt target's: keys made afresh each time, so rerun only for it.
$(B)/tests/mkjwtseeds: $(B)/obj/tests/fuzz/mkjwtseeds.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(PKG_LIBS)

# The share target's, sealed with the key ring it has (fuzz_share.h).
$(B)/tests/mkshareseeds: $(B)/obj/tests/fuzz/mkshareseeds.o \
    $(call obj,mcpd/share.c) $(LIBMCPD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS)

fuzz-seeds: $(B)/tests/mkseeds
	@mkdir -p tests/fuzz/corpus
	$(B)/tests/mkseeds tests/fuzz/corpus

fuzz-seeds-jwt: $(B)/tests/mkjwtseeds
	@mkdir -p tests/fuzz/corpus
	$(B)/tests/mkjwtseeds tests/fuzz/corpus

fuzz-seeds-share: $(B)/tests/mkshareseeds
	@mkdir -p tests/fuzz/corpus
	$(B)/tests/mkshareseeds tests/fuzz/corpus

# --- make fuzz: libFuzzer, with clang, in a tree of its own ------------

FUZZ_CC		?= clang
FUZZ_SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
		   -fno-omit-frame-pointer
# clang counts the fields libseccomp's SCMP_A0() leaves out, and reads no
# /* FALLTHROUGH */ comment; gcc checks both as the code is.
FUZZ_CFLAGS	= -std=gnu11 -O1 -g $(WARNFLAGS) -Wno-missing-field-initializers \
		  -Wno-implicit-fallthrough -fPIE $(FUZZ_SAN) \
		  -fsanitize=fuzzer-no-link $(DEFS) -Icommon -Ipolicy -I$(FZ) \
		  $(PKG_CFLAGS) $(CFLAGS)
fzobj		= $(patsubst %.c,$(FZ)/obj/%.o,$(1))
FUZZ_LIB	:= $(FZ)/libpolicy.a $(FZ)/libcommon.a
FUZZ_BINS	:= $(patsubst %,$(FZ)/fuzz_%,$(FUZZ_TARGETS))

$(FZ)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(FZ)/parse.c: policy/parse.y
	@mkdir -p $(FZ)
	$(BISON) -o $@ $<

$(FZ)/obj/parse.o: $(FZ)/parse.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wno-missing-prototypes -MMD -MP -c -o $@ $<

$(FZ)/libcommon.a: $(call fzobj,$(COMMON_SRCS))
	rm -f $@
	ar rcs $@ $^

$(FZ)/libpolicy.a: $(FZ)/obj/parse.o $(call fzobj,$(POLICY_SRCS))
	rm -f $@
	ar rcs $@ $^

$(FZ)/fuzz_%: $(FZ)/obj/tests/fuzz/fuzz_%.o $(FZ)/obj/tests/fuzz/fuzzlib.o \
    $$(call fzobj,$$(FUZZ_SRCS_$$*)) $(FUZZ_LIB)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $(filter %.o,$^) \
	    $(FUZZ_LIB) $(PKG_LIBS)

fuzz-build: deps-fuzz
	@$(MAKE) --no-print-directory pkgcheck $(FUZZ_BINS)

fuzz: fuzz-build
	@FZ=$(FZ) FUZZ_TIME=$(FUZZ_TIME) sh scripts/fuzz.sh run \
	    $(FUZZ_TARGETS)

fuzz-merge: fuzz-build
	@FZ=$(FZ) sh scripts/fuzz.sh merge $(FUZZ_TARGETS)

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR)/mcpd \
	    $(DESTDIR)$(SYSCONFDIR)/mcpd $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) \
	    $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
	install -d -m 0711 $(DESTDIR)$(LOCALSTATEDIR)/lib/mcpd
	install -m 0755 $(B)/mcpd $(B)/mcp-sandboxd $(B)/mcp-auditd \
	    $(B)/mcpctl $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(B)/sandbox-init $(DESTDIR)$(LIBEXECDIR)/mcpd/
	test -e $(DESTDIR)$(SYSCONFDIR)/mcpd/mcpd.conf || \
	    install -m 0640 policy/mcpd.conf $(DESTDIR)$(SYSCONFDIR)/mcpd/
	install -m 0644 man/*.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 man/*.8 $(DESTDIR)$(MANDIR)/man8/
	for f in $(UNITS); do \
	    sed -e 's|@SBINDIR@|$(SBINDIR)|g' \
	        -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $$f > \
	        $(DESTDIR)$(UNITDIR)/$${f##*/}; \
	    chmod 0644 $(DESTDIR)$(UNITDIR)/$${f##*/}; \
	done
	install -m 0644 systemd/sysusers.conf $(DESTDIR)$(SYSUSERSDIR)/mcpd.conf
	install -m 0644 systemd/tmpfiles.conf $(DESTDIR)$(TMPFILESDIR)/mcpd.conf

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/mcpd $(DESTDIR)$(SBINDIR)/mcp-sandboxd \
	    $(DESTDIR)$(SBINDIR)/mcp-auditd $(DESTDIR)$(SBINDIR)/mcpctl
	rm -rf $(DESTDIR)$(LIBEXECDIR)/mcpd
	for f in man/*.5; do rm -f $(DESTDIR)$(MANDIR)/man5/$${f##*/}; done
	for f in man/*.8; do rm -f $(DESTDIR)$(MANDIR)/man8/$${f##*/}; done
	for f in $(UNITS); do \
	    rm -f $(DESTDIR)$(UNITDIR)/$${f##*/}; done
	rm -f $(DESTDIR)$(SYSUSERSDIR)/mcpd.conf \
	    $(DESTDIR)$(TMPFILESDIR)/mcpd.conf
	@echo "left in place: the configuration in $(DESTDIR)$(SYSCONFDIR)/mcpd" \
	    "and the state in $(DESTDIR)$(LOCALSTATEDIR)/lib/mcpd"

clean:
	rm -rf build build-san build-vm-* $(FZ)

# The fuzz build's too: fuzz-build's sub-make names its binaries alone.
-include $(shell find $(B) $(FZ) -name '*.d' 2>/dev/null)
