// swift-tools-version:6.2
// TileKit: custom raster map tiles, overlays, snapshots and a tile server on Linux.
// Depends only on the Swift toolchain and on C libraries from Debian packages
// (see scripts/install-deps.sh for the package names).
import PackageDescription

/// A pkg-config backed wrapper of one C library: `module.modulemap` + `shim.h`.
func cLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "TileKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "TileMath", targets: ["TileMath"]),
        .library(name: "Canvas", targets: ["Canvas"]),
        .executable(name: "tilekit", targets: ["tilekit"]),
    ],
    targets: [
        // C libraries, each imported by exactly one Swift module.
        cLibrary("CCairo", pkgConfig: "cairo", apt: "libcairo2-dev"),
        // SwiftPM prints "prohibited flag(s): -pthread" once when it reads this package: glib's
        // and harfbuzz's .pc files (which pangocairo.pc requires) list -pthread, which SwiftPM
        // drops (nothing needs it: Swift links libpthread anyway). Unlike hiredis (below),
        // pango's headers need glib's include folders, which only pkg-config knows.
        cLibrary("CPango", pkgConfig: "pangocairo", apt: "libpango1.0-dev"),
        cLibrary("CPNG", pkgConfig: "libpng", apt: "libpng-dev"),
        cLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        cLibrary("CDeflate", pkgConfig: "libdeflate", apt: "libdeflate-dev"),
        cLibrary("CISAL", pkgConfig: "libisal", apt: "libisal-dev"),
        cLibrary("CTurboJPEG", pkgConfig: "libturbojpeg", apt: "libturbojpeg0-dev"),
        cLibrary("CWebP", pkgConfig: "libwebp", apt: "libwebp-dev"),
        cLibrary("CSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        cLibrary("CMicroHTTPD", pkgConfig: "libmicrohttpd", apt: "libmicrohttpd-dev"),
        cLibrary("CJPEG", pkgConfig: "libjpeg", apt: "libjpeg62-turbo-dev"),
        cLibrary("CTIFF", pkgConfig: "libtiff-4", apt: "libtiff-dev"),
        // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, a flag SwiftPM refuses with a
        // warning (hiredis' structs hold no off_t); shim.h includes <hiredis/hiredis.h>.
        .systemLibrary(name: "CHiredis", path: "Sources/CHiredis", providers: [.apt(["libhiredis-dev"])]),
        cLibrary("CXML2", pkgConfig: "libxml-2.0", apt: "libxml2-dev"),
        // Small C targets where Swift cannot call the API directly.
        .target(name: "CPNGCodec", dependencies: ["CPNG"]),  // libpng's setjmp error handling
        .target(name: "CJPEGReader", dependencies: ["CJPEG"]),  // libjpeg's setjmp error handling, scanline reads
        .target(name: "CTIFFReader", dependencies: ["CTIFF"]),  // variadic TIFFGetField, libtiff's stderr handler
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD"]),  // variadic MHD_start_daemon
        .target(name: "CMallocLimit"),  // libFuzzer's -malloc_limit_mb for the fuzz replay (malloc in front of glibc's)
        .target(name: "CPixelLoops"),  // the pyramid's resampling and averaging loops and the coverage raster's compositing, vectorized
        .target(name: "CBodyDigest"),  // the ETag digest of response bodies, AVX2 where the CPU has it

        // Pure Swift tile math: coordinates, tiles, geodesy, encoded polylines.
        .target(name: "TileMath"),
        // Colours (sRGB, straight alpha; hex and CSS names), pure Swift: Features names them without cairo.
        .target(name: "Colors"),
        // Images and drawing over cairo, pango and the codecs; re-exports Colors.
        .target(name: "Canvas", dependencies: ["TileMath", "Colors", "CCairo", "CPango", "CPNGCodec", "CDeflate", "CISAL", "CTurboJPEG", "CWebP", "CJPEGReader", "CTIFFReader", "CPixelLoops"]),
        // MBTiles 1.3 files over SQLite (the only importer of CSQLite).
        .target(name: "MBTiles", dependencies: ["TileMath", "CSQLite", "Compression"]),
        // gzip through zlib (the only importer of CZlib).
        .target(name: "Compression", dependencies: ["CZlib"]),
        // PMTiles v3 files: Hilbert ids, directories, leaves, run-length dedup.
        .target(name: "PMTiles", dependencies: ["TileMath", "Compression"]),
        // Features from GeoJSON, GPX, KML and plist files.
        .target(name: "Features", dependencies: ["TileMath", "Colors", "CXML2"]),
        // Tile sources, layers (zooms, bounds, overzoom, fallback) and composition.
        .target(name: "TileSources", dependencies: ["TileMath", "Canvas", "MBTiles", "PMTiles", "Compression"]),
        // Drawing features into tiles and images.
        .target(name: "Rendering", dependencies: ["TileMath", "Canvas", "Features", "TileSources"]),
        // The command line, as a library so it is testable.
        // Tile pyramids from georeferenced images; stitching and splitting.
        .target(name: "Pyramids", dependencies: ["TileMath", "Canvas", "TileSources", "Compression", "CPixelLoops"]),
        // The location game: points of interest, encounters, warps, route playback.
        .target(name: "Game", dependencies: ["TileMath", "Features"]),
        // map.json: reading, checking, and opening a map's layers.
        .target(name: "MapProjects", dependencies: ["TileMath", "Canvas", "TileSources", "Features", "Rendering", "Game"]),
        // HTTP/1.1 on libmicrohttpd (its only importer): the adapter above the core, which
        // converts the core's requests and responses to and from the socket.
        .target(name: "HTTPServer", dependencies: ["TileServer", "TileMath", "CMicroHTTPD", "CMicroHTTPDShim"]),
        // A tile cache shared by server instances, in Redis over hiredis (its only importer);
        // RFC 9211 Cache-Status values.
        .target(name: "SharedCache", dependencies: ["CHiredis", "TileMath", "Compression"]),
        // The tile server core: routes, TileJSON, static images, metrics, the Leaflet viewer;
        // its own request, response and stream types, answered without a socket.
        .target(name: "TileServer", dependencies: ["TileMath", "Canvas", "TileSources", "Features", "Rendering", "Compression",
                                                   "MapProjects", "Game", "SharedCache", "CBodyDigest"]),
        .target(name: "TileKitCLI", dependencies: ["TileMath", "Canvas", "TileSources", "MBTiles", "Features", "Rendering",
                                                   "MapProjects", "TileServer", "HTTPServer", "Pyramids", "Game", "SharedCache"]),
        .executableTarget(name: "tilekit", dependencies: ["TileKitCLI"]),
        // Measurements for `make bench` (scripts/bench.py compares them with reference tools).
        .executableTarget(name: "tilekit-bench", dependencies: ["Canvas", "TileMath", "TileSources", "Features", "Rendering"], path: "Sources/TileKitBench"),
        // The fuzz targets (Fuzz/README.md): a replay tool in this build; `make fuzz` builds it with libFuzzer.
        .executableTarget(name: "tilekit-fuzz", dependencies: ["CMallocLimit", "CDeflate", "CZlib", "TileMath", "Canvas", "Compression", "MBTiles", "PMTiles", "TileSources",
                                                               "Features", "Rendering", "Pyramids", "Game", "MapProjects", "HTTPServer", "TileServer"],
                          path: "Sources/TileKitFuzz"),

        .testTarget(name: "TileMathTests", dependencies: ["TileMath"], resources: [.copy("Fixtures")]),
        .testTarget(name: "ColorsTests", dependencies: ["Colors"]),
        .testTarget(name: "CompressionTests", dependencies: ["Compression"]),
        .testTarget(name: "CanvasTests", dependencies: ["Canvas", "TileMath", "TestSupport"], exclude: ["Goldens", "Fixtures"]),
        // The fault-injecting tile server (scripts/test-tile-server.py) for network tests.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "TileSourcesTests", dependencies: ["TileSources", "TileMath", "Canvas", "MBTiles", "PMTiles", "Compression", "TestSupport"],
                    exclude: ["Hostile"]),
        .testTarget(name: "FeaturesTests", dependencies: ["Features", "TileMath", "Colors"], resources: [.copy("Fixtures")]),
        .testTarget(name: "RenderingTests", dependencies: ["Rendering", "Features", "TileSources", "TileMath", "Canvas"], exclude: ["Goldens", "Fixtures"]),
        .testTarget(name: "TileKitCLITests", dependencies: ["TileKitCLI", "TileMath", "TileSources", "MBTiles", "MapProjects", "TestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "TileServerTests", dependencies: ["TileServer", "MapProjects", "Rendering", "HTTPServer", "TileSources", "TileMath", "Canvas", "SharedCache", "TestSupport", "CBodyDigest"]),
        .testTarget(name: "PyramidsTests", dependencies: ["Pyramids", "Canvas", "TileMath", "TileSources"], exclude: ["Fixtures"]),
        .testTarget(name: "GameTests", dependencies: ["Game", "TileMath"], exclude: ["Fixtures"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TileServer", "TestSupport"]),
        .testTarget(name: "MBTilesTests", dependencies: ["MBTiles", "TileSources", "TileMath", "Canvas", "CSQLite"]),
        .testTarget(name: "PMTilesTests", dependencies: ["PMTiles", "TileSources", "TileMath", "Canvas"]),
        .testTarget(name: "MapProjectsTests", dependencies: ["MapProjects", "TileSources", "TileMath", "Canvas", "Game"]),
        .testTarget(name: "SharedCacheTests", dependencies: ["SharedCache", "TileMath", "TestSupport"]),
        // Replays Fuzz/corpus and Fuzz/crashes through the tilekit-fuzz binary (one process per crash file).
        .testTarget(name: "FuzzReplayTests", dependencies: ["TestSupport"]),
        .testTarget(name: "CLibrariesTests", dependencies: ["CSQLite", "CMicroHTTPDShim", "CMicroHTTPD"]),
    ],
    swiftLanguageModes: [.v6]
)

// Zero warnings, enforced: a warning in any of the project's own Swift modules (sources,
// tests, tools) fails the build. SwiftPM's own notes (`prohibited flag(s): -pthread` from
// pango's pkg-config) and linker messages are not compiler warnings and are not affected;
// C targets ignore Swift settings.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
}
