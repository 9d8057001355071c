"""A package index for packages.sh: a PyPI "simple" index and an npm
registry, each holding one small package this script makes itself.

    pkgserver.py ADDRESS PORT

Serves /simple/mcpdpkg/ (a wheel) and /mcpd-test-pkg (an npm packument
and its tarball) on ADDRESS:PORT until killed.  No outside network: the
sandbox under test reaches it through its egress.
"""
import base64
import hashlib
import http.server
import io
import json
import sys
import tarfile
import zipfile

ADDR, PORT = sys.argv[1], int(sys.argv[2])
BASE = f"http://{ADDR}:{PORT}"


def wheel():
    files = {
        "mcpdpkg/__init__.py": b"ANSWER = 42\n",
        "mcpdpkg-1.0.dist-info/METADATA":
            b"Metadata-Version: 2.1\nName: mcpdpkg\nVersion: 1.0\n",
        "mcpdpkg-1.0.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: mcpd-test\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for name, data in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
        record += f"{name},sha256={h.rstrip(b'=').decode()},{len(data)}\n"
    record += "mcpdpkg-1.0.dist-info/RECORD,,\n"
    files["mcpdpkg-1.0.dist-info/RECORD"] = record.encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def npm_tarball():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in {
            "package/package.json": json.dumps(
                {"name": "mcpd-test-pkg", "version": "1.0.0",
                 "main": "index.js"}).encode(),
            "package/index.js": b"module.exports = { answer: 42 };\n",
        }.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


WHL = wheel()
WHL_NAME = "mcpdpkg-1.0-py3-none-any.whl"
TGZ = npm_tarball()
PACKUMENT = json.dumps({
    "name": "mcpd-test-pkg",
    "dist-tags": {"latest": "1.0.0"},
    "versions": {"1.0.0": {
        "name": "mcpd-test-pkg", "version": "1.0.0", "main": "index.js",
        "dist": {
            "tarball": f"{BASE}/mcpd-test-pkg/-/mcpd-test-pkg-1.0.0.tgz",
            "shasum": hashlib.sha1(TGZ).hexdigest(),
            "integrity": "sha512-" + base64.b64encode(
                hashlib.sha512(TGZ).digest()).decode()}}}}).encode()
ROUTES = {
    "/simple/mcpdpkg/": ("text/html", (
        f'<a href="/files/{WHL_NAME}#sha256='
        f'{hashlib.sha256(WHL).hexdigest()}">{WHL_NAME}</a>').encode()),
    f"/files/{WHL_NAME}": ("application/octet-stream", WHL),
    "/mcpd-test-pkg": ("application/json", PACKUMENT),
    "/mcpd-test-pkg/-/mcpd-test-pkg-1.0.0.tgz":
        ("application/octet-stream", TGZ),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/simple/mcpdpkg":
            path += "/"
        if path not in ROUTES:
            self.send_error(404)
            return
        ctype, body = ROUTES[path]
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


http.server.ThreadingHTTPServer((ADDR, PORT), Handler).serve_forever()
