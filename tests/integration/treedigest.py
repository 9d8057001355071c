#!/usr/bin/python3
"""The tree digest of a directory, written from the encoding that
mcpctl(8) and common/imgdigest.c give, and from nothing else: a second
implementation to hold the first to its word.

    treedigest.py DIR    prints "sha256:<hex> <size> <files>"
"""
import errno
import hashlib
import os
import stat
import sys

TYPES = [(stat.S_ISDIR, b"d"), (stat.S_ISREG, b"f"), (stat.S_ISLNK, b"l"),
         (stat.S_ISCHR, b"c"), (stat.S_ISBLK, b"b"), (stat.S_ISFIFO, b"p"),
         (stat.S_ISSOCK, b"s")]


def xattrs(path):
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError as e:
        if e.errno in (errno.ENOTSUP, errno.EPERM):
            return b""
        raise
    out = b""
    for n in sorted(os.fsencode(n) for n in names):
        if n.startswith(b"trusted."):
            continue
        v = os.getxattr(path, n, follow_symlinks=False)
        out += b" x " + n + b"\0" + b"%d " % len(v) + v
    return out


class Tree:
    def __init__(self):
        self.sha = hashlib.sha256()
        self.size = 0
        self.files = 0

    def entry(self, rel, path):
        st = os.lstat(path)
        kind = next(c for test, c in TYPES if test(st.st_mode))
        rec = rel + b"\0" + kind + b" %04o %d %d" % (
            st.st_mode & 0o7777, st.st_uid, st.st_gid)
        if kind == b"f":
            with open(path, "rb") as f:
                data = f.read()
            rec += b" %d %s" % (len(data),
                                hashlib.sha256(data).hexdigest().encode())
            self.size += len(data)
            self.files += 1
        elif kind == b"l":
            target = os.readlink(path)
            rec += b" %d " % len(target) + target
        elif kind in (b"c", b"b"):
            rec += b" %d %d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        self.sha.update(rec + xattrs(path) + b"\n")
        if kind == b"d":
            for name in sorted(os.listdir(path)):
                sub = name if rel == b"." else rel + b"/" + name
                self.entry(sub, os.path.join(path, name))


def main():
    t = Tree()
    t.entry(b".", os.fsencode(sys.argv[1]))
    print("sha256:%s %d %d" % (t.sha.hexdigest(), t.size, t.files))


if __name__ == "__main__":
    main()
