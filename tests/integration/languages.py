"""Every language of the default table, driven over stdio.

Run by languages.sh, which starts the suite with a host image and a
rootfs image ("mini") that holds no shell; environment: B, CONF, T.
For each language: hello world, reading stdin, a non-zero exit, and for
a compiled one a build error reported as a build error.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from mcpclient import Stdio, ok, diag, done, result, text, sc, is_error

B, CONF, T = os.environ["B"], os.environ["CONF"], os.environ["T"]

# name: (hello, echo stdin upper-cased, exit 3, build error or None,
#        version must contain)
PROGRAMS = {
    "python": (
        'print("hello, world")',
        'import sys\nprint(sys.stdin.read().upper(), end="")',
        'import sys\nprint("bye")\nsys.exit(3)',
        None, "Python 3"),
    "javascript": (
        'console.log("hello, world");',
        'const s = require("fs").readFileSync(0, "utf8");\n'
        'process.stdout.write(s.toUpperCase());',
        'console.log("bye");\nprocess.exit(3);',
        None, "v"),
    "typescript": (
        'const who: string = "world";\nconsole.log(`hello, ${who}`);',
        'import * as fs from "fs";\n'
        'const s: string = fs.readFileSync(0, "utf8");\n'
        'process.stdout.write(s.toUpperCase());',
        'console.log("bye");\nprocess.exit(3);',
        'const n: number = "not a number";\n', "Version"),
    "sh": (
        'echo "hello, world"',
        'tr a-z A-Z',
        'echo bye\nexit 3',
        None, None),
    "bash": (
        'w=world; echo "hello, ${w}"',
        'while IFS= read -r l; do echo "${l^^}"; done',
        'echo bye\nexit 3',
        None, "GNU bash"),
    "c": (
        '#include <stdio.h>\nint main(void) { puts("hello, world"); '
        'return 0; }',
        '#include <stdio.h>\n#include <ctype.h>\nint main(void) { int c; '
        'while ((c = getchar()) != EOF) putchar(toupper(c)); return 0; }',
        '#include <stdio.h>\nint main(void) { puts("bye"); return 3; }',
        'int main(void) { return undeclared; }', "cc"),
    "cpp": (
        '#include <iostream>\nint main() { std::cout << "hello, world" '
        '<< std::endl; }',
        '#include <iostream>\n#include <string>\n#include <algorithm>\n'
        'int main() { std::string l; while (std::getline(std::cin, l)) {'
        ' std::transform(l.begin(), l.end(), l.begin(), ::toupper); '
        'std::cout << l << "\\n"; } }',
        '#include <iostream>\nint main() { std::cout << "bye\\n"; '
        'return 3; }',
        'int main() { std::string s; }', "c++"),
    "go": (
        'package main\nimport "fmt"\nfunc main() { '
        'fmt.Println("hello, world") }',
        'package main\nimport ("bufio"; "fmt"; "os"; "strings")\n'
        'func main() { s := bufio.NewScanner(os.Stdin); for s.Scan() { '
        'fmt.Println(strings.ToUpper(s.Text())) } }',
        'package main\nimport ("fmt"; "os")\nfunc main() { '
        'fmt.Println("bye"); os.Exit(3) }',
        'package main\nfunc main() { x := 1 }', "go version"),
    "rust": (
        'fn main() { println!("hello, world"); }',
        'use std::io::Read;\nfn main() { let mut s = String::new(); '
        'std::io::stdin().read_to_string(&mut s).unwrap(); '
        'print!("{}", s.to_uppercase()); }',
        'fn main() { println!("bye"); std::process::exit(3); }',
        'fn main() { let x: i32 = "no"; }', "rustc"),
    "java": (
        'public class Main { public static void main(String[] a) { '
        'System.out.println("hello, world"); } }',
        'import java.io.*;\npublic class Main { public static void '
        'main(String[] a) throws IOException { BufferedReader r = new '
        'BufferedReader(new InputStreamReader(System.in)); String l; '
        'while ((l = r.readLine()) != null) '
        'System.out.println(l.toUpperCase()); } }',
        'public class Main { public static void main(String[] a) { '
        'System.out.println("bye"); System.exit(3); } }',
        'public class Main { public static void main(String[] a) { '
        'int x = "no"; } }', "javac"),
    "ruby": (
        'puts "hello, world"',
        'print STDIN.read.upcase',
        'puts "bye"\nexit 3',
        None, "ruby"),
    "perl": (
        'print "hello, world\\n";',
        'while (<STDIN>) { print uc; }',
        'print "bye\\n"; exit 3;',
        None, "perl"),
    "php": (
        '<?php echo "hello, world\\n";',
        '<?php echo strtoupper(stream_get_contents(STDIN));',
        '<?php echo "bye\\n"; exit(3);',
        None, "PHP"),
}

FILES = {"typescript": "main.ts", "c": "main.c", "cpp": "main.cpp",
         "go": "main.go", "rust": "main.rs", "java": "Main.java"}

c = Stdio([f"{B}/mcpd", "--stdio", "-v", "-f", CONF], f"{T}/stdio.log")
c.initialize("2025-11-25")

r = c.tool("list_languages", {}, timeout=120)
ok(not is_error(r), "list_languages answers", r)
images = {i["name"]: i for i in sc(r).get("images", [])}
ok(set(images) == {"host", "mini"}, "it lists both images", images)
host = {l["name"]: l["version"] for l in images["host"]["languages"]}
diag("host image: " + ", ".join(f"{k} ({v})" for k, v in host.items()))
for name, prog in PROGRAMS.items():
    ok(name in host and (prog[4] is None or prog[4] in host[name]),
       f"{name} is present in the host image with its version "
       f"({host.get(name)!r})", host)
ok(images["mini"]["languages"] == [] and
   "sh" in images["mini"].get("probe_error", ""),
   "the mini image, which has no shell, runs no language and says why",
   images["mini"])
langs = {l["name"]: l for l in sc(r)["languages"]}
ok(langs["python"]["version"].startswith("Python 3") and
   langs["python"]["images"] == [{"image": "host",
                                  "version": langs["python"]["version"]}],
   "each language lists the images that have it", langs["python"])
ok("image host (host)" in text(r) and "python: Python 3" in text(r),
   "the text lists languages per image", text(r))

for name, (hello, echo, fail, bad, _) in PROGRAMS.items():
    r = c.tool("run_code", {"language": name, "code": hello}, timeout=120)
    ok(not is_error(r) and sc(r).get("stdout") == "hello, world\n" and
       sc(r).get("exit_code") == 0, f"{name}: hello world", r)
    r = c.tool("run_code", {"language": name, "code": echo,
                            "stdin": "one\ntwo\n"}, timeout=120)
    ok(not is_error(r) and sc(r).get("stdout") == "ONE\nTWO\n",
       f"{name}: reads stdin", r)
    r = c.tool("run_code", {"language": name, "code": fail}, timeout=120)
    ok(is_error(r) and sc(r).get("exit_code") == 3 and
       sc(r).get("stdout") == "bye\n" and not sc(r).get("build_failed"),
       f"{name}: a non-zero exit is the program's, with its output", r)
    if bad is None:
        continue
    r = c.tool("run_code", {"language": name, "code": bad}, timeout=120)
    ok(is_error(r) and sc(r).get("build_failed") is True and
       sc(r).get("exit_code") not in (0, None) and
       FILES[name] in sc(r).get("build_output", "") and
       sc(r).get("stdout") == "",
       f"{name}: a build error is a build error, with the compiler's "
       f"message", r)

r = c.tool("run_code", {"language": "python", "code": "print(1)",
                        "image": "mini"})
ok(is_error(r) and "has no python" in text(r) and
   "list_languages" in text(r),
   "a language the image lacks is refused before running, naming it", r)
r = c.tool("run_code", {"language": "python", "code": "print(1)",
                        "image": "nosuch"})
ok(is_error(r) and "nosuch" in text(r), "an unknown image is refused", r)
r = c.tool("run_code", {"language": "python", "code": "print(1)",
                        "image": "host", "sandbox": "x"})
ok(is_error(r) and "not both" in text(r),
   "image and sandbox together are refused", r)
# --- What a run makes: files listed, pictures shown -------------------
PLOT = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [1, 4, 9])
plt.title("squares")
plt.savefig("plot.png")
plt.savefig("out/plot.svg")
open("fake.png", "w").write("not a picture")
open("data.csv", "w").write("x,y\\n1,1\\n")
print("saved")
"""
r = c.tool("run_code", {"language": "python", "code": PLOT,
                        "files": [{"path": "out/keep.txt",
                                   "content": "given"}]}, timeout=120)
made = {f["path"]: f["size"] for f in sc(r).get("files_created", [])}
ok(not is_error(r) and set(made) >= {"plot.png", "out/plot.svg",
                                     "fake.png", "data.csv"} and
   "main.py" not in made and "out/keep.txt" not in made,
   "run_code lists the files the run made, not the ones it was given",
   made or r)
imgs = [x for x in result(r).get("content", []) if x["type"] == "image"]
png = [x for x in imgs if x["mimeType"] == "image/png"]
svg = [x for x in imgs if x["mimeType"] == "image/svg+xml"]
import base64
ok(len(png) == 1 and base64.b64decode(png[0]["data"]).startswith(
       b"\x89PNG\r\n\x1a\n") and
   len(base64.b64decode(png[0]["data"])) == made.get("plot.png"),
   "the matplotlib PNG comes back as image content, whole",
   [(x["mimeType"], len(x["data"])) for x in imgs])
ok(len(svg) == 1 and b"<svg" in base64.b64decode(svg[0]["data"]),
   "an SVG comes back as an image too", [x["mimeType"] for x in imgs])
ok(len(imgs) == 2 and "plot.png is shown below" in text(r) and
   "files created:" in text(r),
   "a file named .png that is no picture is listed, not shown", text(r))

r = c.tool("sandbox_create", {"name": "pics"})
ok(not is_error(r), "a sandbox for runs that keep files", r)
r = c.tool("run_code", {"language": "sh", "sandbox": "pics",
                        "code": "echo old > old.txt"})
time.sleep(1.1)
r = c.tool("run_code", {"language": "sh", "sandbox": "pics",
                        "code": "cat old.txt; echo new > new.txt"})
made = [f["path"] for f in sc(r).get("files_created", [])]
ok(not is_error(r) and sc(r).get("stdout") == "old\n" and
   made == ["new.txt"],
   "in a sandbox, only what this run made is listed", r)
c.tool("sandbox_stop", {"sandbox": "pics"})

r = c.tool("list_images", {})
ok(not is_error(r) and [i["name"] for i in sc(r)["images"]] ==
   ["host", "mini"] and "languages" not in sc(r)["images"][0],
   "list_images lists the images without probing", r)
c.close()
done()
