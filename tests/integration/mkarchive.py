#!/usr/bin/python3
"""A docker-archive tar ("docker save" format) of one image of one layer,
written with tarfile and json alone: a producer that is neither skopeo
nor umoci, and that writes whatever entries it is told to, hostile ones
included.

    mkarchive.py OUT.tar < SPEC

SPEC has one entry a line, fields separated by single spaces:
    dir PATH MODE
    file PATH MODE HOSTFILE      (the content of a host file)
    text PATH MODE TEXT...
    symlink PATH TARGET
    hardlink PATH TARGET
    chardev PATH MODE MAJOR MINOR
Owners are root.  PATH and TARGET go into the layer as they are.
"""
import hashlib
import io
import json
import sys
import tarfile


def entry(tar, fields):
    kind, name = fields[0], fields[1]
    info = tarfile.TarInfo(name)
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 1795273200
    data = None
    if kind == "dir":
        info.type, info.mode = tarfile.DIRTYPE, int(fields[2], 8)
    elif kind in ("file", "text"):
        info.mode = int(fields[2], 8)
        if kind == "file":
            with open(fields[3], "rb") as f:
                data = f.read()
        else:
            data = " ".join(fields[3:]).encode() + b"\n"
        info.size = len(data)
    elif kind == "symlink":
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, fields[2], 0o777
    elif kind == "hardlink":
        info.type, info.linkname, info.mode = tarfile.LNKTYPE, fields[2], 0o644
    elif kind == "chardev":
        info.type, info.mode = tarfile.CHRTYPE, int(fields[2], 8)
        info.devmajor, info.devminor = int(fields[3]), int(fields[4])
    else:
        sys.exit("mkarchive: unknown entry " + kind)
    tar.addfile(info, io.BytesIO(data) if data is not None else None)


def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1795273200
    tar.addfile(info, io.BytesIO(data))


def main():
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.PAX_FORMAT) as t:
        for line in sys.stdin.read().splitlines():
            if line.strip():
                entry(t, line.split(" "))
    layer = layer.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Cmd": ["/bin/hello"]},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "mkarchive.py"}],
    }).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps([{"Config": config_name,
                            "RepoTags": ["mcpd-test:latest"],
                            "Layers": ["layer/layer.tar"]}]).encode()
    with tarfile.open(sys.argv[1], mode="w") as out:
        add(out, config_name, config)
        add(out, "layer/layer.tar", layer)
        add(out, "manifest.json", manifest)


if __name__ == "__main__":
    main()
