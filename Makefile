# mcpd: build, run and test the suite.  See README.md.
#
#   make            build everything into build/ (build-san/ with SANITIZE=1)
#   make run        install missing packages (as root), build, start the suite
#   make check      install missing packages (as root), build, run every test
#   make images     build the data and polyglot images (as root) for make run
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
PKGS		:= libevent jansson sqlite3 libseccomp libcap-ng libsodium

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

ALL_CFLAGS	= -std=gnu11 $(OPTFLAGS) $(WARNFLAGS) $(HARDFLAGS) $(SANFLAGS) \
		  $(DEFS) -Icommon -Ipolicy -I$(B) $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS	= -pie -Wl,-z,relro,-z,now $(SANFLAGS) $(LDFLAGS)

COMMON_SRCS	:= $(wildcard common/*.c)
POLICY_SRCS	:= $(wildcard policy/*.c)
MCPD_SRCS	:= $(wildcard mcpd/*.c)
SANDBOXD_SRCS	:= $(wildcard sandboxd/*.c)
AUDITD_SRCS	:= $(wildcard auditd/*.c)
MCPCTL_SRCS	:= $(wildcard auditd/mcpctl/*.c)
UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
TOOL_SRCS	:= $(wildcard tests/tools/*.c)

obj		= $(patsubst %.c,$(B)/obj/%.o,$(1))

LIBMCPD		:= $(B)/libmcpd.a
PROGS		:= $(B)/mcpd $(B)/mcp-sandboxd $(B)/mcp-auditd \
		   $(B)/mcpctl $(B)/sandbox-init $(B)/mcpd-conformance
INIT_SRCS	:= $(wildcard sandboxd/init/*.c) common/imsg.c common/proto.c
UNITS		:= $(wildcard systemd/*.service systemd/*.socket)
UNIT_TESTS	:= $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
TOOLS		:= $(patsubst tests/tools/%.c,$(B)/tests/%,$(TOOL_SRCS))

.PHONY: all deps deps-run deps-check run check bench images install \
	uninstall clean pkgcheck
.DEFAULT_GOAL := all

all: pkgcheck $(PROGS) $(UNIT_TESTS) $(TOOLS)

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

# The deps step runs in a sub-make first, so that the build that follows
# sees the libraries it may just have installed.
run: deps-run
	@$(MAKE) --no-print-directory all
	@B=$(B) bash scripts/run.sh

check: deps-check
	@$(MAKE) --no-print-directory all
	@B=$(B) sh tests/run.sh

# The larger image presets, into the state directory make run serves;
# minutes and gigabytes, so not part of check (which builds a minimal one).
images: deps-run
	@$(MAKE) --no-print-directory all
	@B=$(B) bash scripts/images.sh

# Benchmarks print tables; they are not tests and assert nothing.
bench: deps-check
	@$(MAKE) --no-print-directory all
	@for b in tests/bench/*.sh; do B=$(B) bash $$b || exit 1; done

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/parse.c: policy/parse.y
	@mkdir -p $(B)
	$(BISON) -o $@ $<

$(B)/obj/parse.o: $(B)/parse.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -MMD -MP -c -o $@ $<

# common/ and policy/ go into one archive: each uses the other.
$(LIBMCPD): $(call obj,$(COMMON_SRCS)) $(B)/obj/parse.o $(call obj,$(POLICY_SRCS))
	rm -f $@
	ar rcs $@ $^

LIBS		= $(LIBMCPD) $(PKG_LIBS)

$(B)/mcpd: $(call obj,$(MCPD_SRCS)) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(call obj,$(MCPD_SRCS)) $(LIBS)

# The conformance suite's fixtures live only in this test build of mcpd:
# the same sources, compiled apart with MCPD_CONFORMANCE.  Never installed.
CONF_OBJS	= $(patsubst %.c,$(B)/obj-conformance/%.o,$(MCPD_SRCS))

$(B)/obj-conformance/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DMCPD_CONFORMANCE -MMD -MP -c -o $@ $<

$(B)/mcpd-conformance: $(CONF_OBJS) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CONF_OBJS) $(LIBS)

$(B)/mcp-sandboxd: $(call obj,$(SANDBOXD_SRCS)) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(call obj,$(SANDBOXD_SRCS)) $(LIBS)

$(B)/mcp-auditd: $(call obj,$(AUDITD_SRCS)) $(LIBMCPD)
	$(CC) $(ALL_LDFLAGS) -o $@ $(call obj,$(AUDITD_SRCS)) $(LIBS)

# mcpctl writes the image store with sandboxd's own tree code (image.c).
MCPCTL_OBJS	= $(call obj,$(MCPCTL_SRCS) sandboxd/image.c)

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
$(B)/tests/mkbundle: $(call obj,sandboxd/bundle.c sandboxd/image.c)

$(B)/tests/%: $(B)/obj/tests/tools/%.o $(LIBMCPD)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS)

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR)/mcpd \
	    $(DESTDIR)$(SYSCONFDIR)/mcpd $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) \
	    $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
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
	@echo "left $(DESTDIR)$(SYSCONFDIR)/mcpd and its configuration in place"

clean:
	rm -rf build build-san

-include $(shell find $(B) -name '*.d' 2>/dev/null)
