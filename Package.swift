// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Courier",
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        // URL, URLRequest, Data and Date conveniences for code moving over from URLSession (full
        // Foundation: opt in by importing CourierFoundation instead of Courier).
        .library(name: "CourierFoundation", targets: ["CourierFoundation"]),
        .executable(name: "courier", targets: ["courier"]),
        // libcourier: the C ABI of include/courier.h (built as libCourierC.so; `make install`
        // installs it as libcourier.so.1, its SONAME).
        .library(name: "CourierC", type: .dynamic, targets: ["CourierCABI"]),
    ],
    targets: [
        // System libraries, found through pkg-config. llhttp's `libllhttp` package comes from the
        // distribution where it exists (Debian 13, Fedora, Arch) or from `make llhttp` (Debian 12).
        .systemLibrary(name: "CUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(name: "CLLHTTP", pkgConfig: "libllhttp", providers: [.apt(["libllhttp-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),

        // llhttp's per-field callbacks, kept in C (one Swift call per response head, not per field).
        .target(name: "CHTTPParser", dependencies: ["CLLHTTP"]),
        // transport -> HTTP/1, HTTP/2 -> pool -> queue, on one libuv loop. No Foundation.
        .target(name: "CourierCore", dependencies: ["CUV", "CLLHTTP", "CHTTPParser", "COpenSSL", "CZlib", "CBrotli", "CZstd", "CNGHTTP2"]),
        // Engine / Operation / Response: callbacks and async/await.
        .target(name: "Courier", dependencies: ["CourierCore"]),
        // Foundation conveniences (URL, URLRequest, Data, Date) over the Foundation-free facade.
        .target(name: "CourierFoundation", dependencies: ["Courier", "CourierCore"]),
        // The C ABI. Only courier_* symbols are exported (a linker version script).
        .target(
            name: "CourierCABI",
            dependencies: ["Courier", "CourierCore", "CUV"],
            exclude: ["exports.map"],
            linkerSettings: [.unsafeFlags([
                "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/CourierCABI/exports.map",
                "-Xlinker", "-soname=libcourier.so.1",
            ])]
        ),
        // include/courier.h as a Clang module, for tests that call the ABI the way C does.
        .systemLibrary(name: "CourierHeader"),
        // The curl-compatible command-line tool.
        .executableTarget(name: "courier", dependencies: ["Courier", "CourierCore"]),
        // Fuzz targets (the response path, URL, chunked and header parsing, the cache's readers, JSON
        // bodies, the C ABI), shared by `courier-fuzz` (libFuzzer with -DFUZZING, or a replay tool) and the
        // corpus replay tests.
        .target(name: "CourierFuzzing", dependencies: ["CourierCore", "Courier", "CUV", "COpenSSL", "CourierCABI", "CourierHeader", "CNGHTTP2"]),
        .executableTarget(name: "courier-fuzz", dependencies: ["CourierFuzzing"]),
        // `make bench`'s fixed entry point: N requests, C in flight, one JSON line.
        .executableTarget(name: "courier-bench", dependencies: ["Courier", "CourierCore", "CUV", "CourierCABI", "CourierHeader"]),
        // `make bench`'s bulk transfers (1 GiB up and down through each API) and the bounded-memory tests.
        .executableTarget(name: "courier-bulk", dependencies: ["Courier", "CourierCore", "CourierCABI", "CourierHeader"]),
        // `make demo`: the library half of the demonstration.
        .executableTarget(name: "courier-demo", dependencies: ["Courier"]),

        .testTarget(name: "CourierCoreTests", dependencies: ["CourierCore", "CZlib", "COpenSSL", "CNGHTTP2", "CourierFuzzing"]),
        .testTarget(name: "CourierIntegrationTests", dependencies: ["Courier", "CourierCore", "courier", "CourierCABI", "CourierHeader",
                                                                  "CourierFoundation", "COpenSSL"]),
    ]
)
