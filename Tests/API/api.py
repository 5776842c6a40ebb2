#!/usr/bin/env python3
"""The Swift API as a checked-in listing: every public declaration of the modules `import Courier`
brings, one line each, so a change to the public surface shows in review as a diff.

  python3 Tests/API/api.py check    (make test: fails when the surface differs from the listing)
  python3 Tests/API/api.py update   (make api: rewrites Tests/API/Courier.api)

The symbol graphs come from the debug build's modules (swift-symbolgraph-extract, which ships
with the toolchain). Listed: public and open declarations written in Sources/ (not members a
protocol's extension supplies). The core is listed too: its aliased types' members are visible
through `import Courier`, and its other public declarations serve the C ABI and the CLI.
"""
import difflib, glob, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LISTING = os.path.join(ROOT, "Tests", "API", "Courier.api")
MODULES = ["Courier", "CourierCore"]
C_MODULES = ["CUV", "CLLHTTP", "COpenSSL", "CZlib", "CBrotli", "CZstd", "CNGHTTP2"]
PKG_CONFIG = ["libuv", "openssl", "libllhttp", "libbrotlidec", "libzstd", "zlib", "libnghttp2"]


def symbol_graph(module, out):
    build = os.path.join(ROOT, ".build", "debug")
    include = subprocess.run(["pkg-config", "--cflags-only-I"] + PKG_CONFIG, capture_output=True, text=True, check=True).stdout.split()
    command = ["swift-symbolgraph-extract", "-module-name", module, "-I", os.path.join(build, "Modules"),
               "-target", "x86_64-unknown-linux-gnu", "-minimum-access-level", "public", "-output-dir", out,
               "-Xcc", "-fmodule-map-file=" + os.path.join(build, "CHTTPParser.build", "module.modulemap"),
               "-Xcc", "-I" + os.path.join(ROOT, "Sources", "CHTTPParser", "include")]
    for name in C_MODULES:
        command += ["-Xcc", "-fmodule-map-file=" + os.path.join(ROOT, "Sources", name, "module.modulemap")]
    for flag in include:
        command += ["-Xcc", flag]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"api.py: swift-symbolgraph-extract failed for {module}:\n{result.stderr[-2000:]}")


def declarations():
    lines = []
    with tempfile.TemporaryDirectory() as out:
        for module in MODULES:
            symbol_graph(module, out)
        for path in sorted(glob.glob(os.path.join(out, "*.symbols.json"))):
            graph = json.load(open(path))
            module = graph["module"]["name"]
            for symbol in graph["symbols"]:
                if symbol.get("accessLevel") not in ("public", "open"):
                    continue
                if "/Sources/" not in symbol.get("location", {}).get("uri", ""):
                    continue
                text = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
                name = ".".join(symbol["pathComponents"])
                lines.append(f"{module} {name}: {' '.join(text.split())}")
    return sorted(set(lines))


def render(lines):
    head = [f"# The public Swift API of `import Courier` ({len(lines)} declarations). Regenerate with `make api`.", ""]
    return "\n".join(head + lines) + "\n"


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    current = render(declarations())
    if mode == "update":
        open(LISTING, "w").write(current)
        print(f"api.py: wrote {os.path.relpath(LISTING, ROOT)}")
        return
    recorded = open(LISTING).read() if os.path.exists(LISTING) else ""
    if recorded == current:
        print(f"api.py: the public API matches {os.path.relpath(LISTING, ROOT)}")
        return
    diff = difflib.unified_diff(recorded.splitlines(), current.splitlines(), "Tests/API/Courier.api (recorded)", "the build", lineterm="")
    print("\n".join(list(diff)[:200]))
    sys.exit("api.py: the public API changed; review the diff above and run `make api` to record it")


if __name__ == "__main__":
    main()
