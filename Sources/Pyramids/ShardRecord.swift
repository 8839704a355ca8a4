import Foundation
public import Canvas
public import TileMath
import TileSources
import Compression

/// What a shard store says about the build it is one part of: which shard, where the build
/// was split, and what `tilekit merge` still has to make, so the merge can check that it was
/// given every shard of one build and no other store, and make the rest exactly as one
/// machine would have. Stored as JSON in the store's metadata (`TileSetMetadata.shardRecord`,
/// key `tilekit_shard`), which `convert` carries along.
public struct ShardRecord: Hashable, Sendable {
    public static let currentVersion = 1

    public enum Command: String, Sendable, Codable { case pyramid, seed }

    public var command: Command
    public var shard: ShardSpec
    public var splitZoom: Int
    /// The zooms of the finished store (a pyramid shard holds only the split zoom and below).
    public var zooms: ClosedRange<Int>
    /// True when `merge` makes the zooms above the split by averaging the split zoom's tiles
    /// (a pyramid with `--lower average`); false when the shards made every zoom.
    public var mergeMakesUpperZooms: Bool
    /// How the tiles merge makes are encoded (those of the upper zooms, and the split zoom's,
    /// which a shard of a JPEG or WebP build keeps as PNG so nothing is lost before averaging).
    public var encoding: EncodingOptions
    /// Pixels of a tile at scale 1, and the scale of this store (2 for a `--retina` sibling).
    public var tileSize: Int
    public var scale: Int
    /// The box whose tiles the build makes, from which every shard computed the same
    /// `ShardPlan`: the image's bounds, or the seeded box as given (not clamped).
    public var region: BoundingBox
    /// The finished store's metadata, exactly (a PMTiles header would round them to 1e-7°).
    public var bounds: BoundingBox
    public var center: Coordinate?
    public var centerZoom: Int?
    /// Everything else every shard of one build shares (the source image and its placement,
    /// the resampling; a seed's source): shards whose `build` differs are not one build.
    public var build: String

    public init(command: Command, shard: ShardSpec, splitZoom: Int, zooms: ClosedRange<Int>, mergeMakesUpperZooms: Bool,
                encoding: EncodingOptions, tileSize: Int, scale: Int, region: BoundingBox, bounds: BoundingBox, center: Coordinate?,
                centerZoom: Int?, build: String) {
        self.command = command
        self.shard = shard
        self.splitZoom = splitZoom
        self.zooms = zooms
        self.mergeMakesUpperZooms = mergeMakesUpperZooms
        self.encoding = encoding
        self.tileSize = tileSize
        self.scale = scale
        self.region = region
        self.bounds = bounds
        self.center = center
        self.centerZoom = centerZoom
        self.build = build
    }

    /// A stable digest of text (the same on every machine), to name a source in `build`
    /// without carrying the text itself.
    public static func digest(_ text: String) -> String { ContentDigest(Array(text.utf8)).text }

    /// The pixel size of this store's tiles.
    public var pixelSize: Int { tileSize * scale }

    /// What differs between this shard's build and `other`'s, in words; nil when they are
    /// shards of one build (everything but the index agrees).
    public func difference(from other: ShardRecord) -> String? {
        var fields: [(String, String, String)] = [
            ("command", command.rawValue, other.command.rawValue), ("shard count", "\(shard.count)", "\(other.shard.count)"),
            ("build", build, other.build), ("zooms", "\(zooms.lowerBound)-\(zooms.upperBound)", "\(other.zooms.lowerBound)-\(other.zooms.upperBound)"), ("split zoom", "\(splitZoom)", "\(other.splitZoom)"),
            ("encoding", "\(encoding)", "\(other.encoding)"), ("tile size", "\(tileSize)", "\(other.tileSize)"),
            ("scale", "\(scale)", "\(other.scale)"), ("region", "\(region)", "\(other.region)"),
        ]
        fields += [("bounds", "\(bounds)", "\(other.bounds)"), ("center", "\(String(describing: center))", "\(String(describing: other.center))"),
                   ("center zoom", "\(String(describing: centerZoom))", "\(String(describing: other.centerZoom))"),
                   ("upper zooms", "\(mergeMakesUpperZooms)", "\(other.mergeMakesUpperZooms)")]
        guard let (name, mine, theirs) = fields.first(where: { $0.1 != $0.2 }) else { return nil }
        return "\(name) \(mine) against \(theirs)"
    }

    /// The plan every shard of the build computed: the same box, zooms, count and split.
    public func plan() throws(TileMathError) -> ShardPlan {
        var ranges = [Int: [TileRange]]()
        for z in zooms {
            let covering = TileRange.covering(region, zoom: z)
            // A pyramid builds one range per zoom (`PyramidBuilder`); a seed every part of the box.
            ranges[z] = command == .pyramid ? Array(covering.prefix(1)) : covering
        }
        return try ShardPlan(count: shard.count, zooms: zooms, ranges: ranges, splitZoom: splitZoom)
    }

    /// The zoom whose tiles a shard keeps losslessly for the merge to average (nil when the
    /// merge averages nothing, or the tiles are PNG anyway).
    public var handoffZoom: Int? {
        mergeMakesUpperZooms && encoding.format != .png && splitZoom > zooms.lowerBound ? splitZoom : nil
    }

    /// The lossless encoding of the hand-off zoom's tiles.
    public static let handoffEncoding = EncodingOptions.png(compressionLevel: 1)

    // MARK: - JSON

    /// The JSON form, sorted keys. Fractional numbers are strings of Swift's shortest exact
    /// form: Foundation's JSON on Linux reads -73.98190000000001 back as -73.98190000000002,
    /// which would move a merged store's bounds (and could move a tile range's edge).
    public var json: String {
        let data = (try? ShardRecordJSON(self).sortedJSON(.withoutEscapingSlashes)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads the JSON form, checking every field; `file` names the store in errors.
    public init(json text: String, file: String) throws(PyramidError) {
        func bad(_ field: String, _ reason: String) -> PyramidError {
            .shardRecord(file: file, reason: "\(TileSetMetadata.shardRecordKey) \(field) \(reason)")
        }
        guard text.utf8.count <= 65_536,
              let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            throw .shardRecord(file: file, reason: "\(TileSetMetadata.shardRecordKey) is not a JSON object")
        }
        func int(_ key: String, _ range: ClosedRange<Int>) throws(PyramidError) -> Int {
            guard let number = object[key] as? NSNumber, number.doubleValue.isFinite,
                  let value = Int(exactly: number.doubleValue), range.contains(value) else {
                throw bad(key, "\(object[key].map { "\($0)" } ?? "(missing)") is not a whole number in \(range.lowerBound)-\(range.upperBound)")
            }
            return value
        }
        func doubles(_ key: String, _ count: Int) throws(PyramidError) -> [Double]? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String, let numbers = Self.numbers(text), numbers.count == count else {
                throw bad(key, "\(value) is not \(count) numbers separated by commas")
            }
            return numbers
        }
        let version = try int("version", 0...Int(Int32.max))
        guard version == Self.currentVersion else {
            throw bad("version", "\(version) is not \(Self.currentVersion): merge with the tilekit that made the shards")
        }
        guard let commandText = object["command"] as? String, let command = Command(rawValue: commandText) else {
            throw bad("command", "\(object["command"].map { "\($0)" } ?? "(missing)") is not pyramid or seed")
        }
        guard let shardText = object["shard"] as? String else { throw bad("shard", "is missing") }
        do { shard = try ShardSpec(parsing: shardText) } catch { throw bad("shard", error.description) }
        self.command = command
        let minZoom = try int("minzoom", 0...TileID.maxZoom), maxZoom = try int("maxzoom", minZoom...TileID.maxZoom)
        zooms = minZoom...maxZoom
        splitZoom = try int("split_zoom", zooms)
        guard let upper = object["merge_makes_upper_zooms"] as? Bool else { throw bad("merge_makes_upper_zooms", "is not true or false") }
        mergeMakesUpperZooms = upper
        guard let encodingObject = object["encoding"] as? [String: Any] else { throw bad("encoding", "is not an object") }
        encoding = try Self.encoding(encodingObject, bad)
        tileSize = try int("tile_size", TileSetMetadata.tileSizes)
        scale = try int("scale", 1...4)
        func box(_ key: String) throws(PyramidError) -> BoundingBox {
            guard let box = try doubles(key, 4) else { throw bad(key, "is missing") }
            do { return try BoundingBox(west: box[0], south: box[1], east: box[2], north: box[3]).validated() } catch {
                throw bad(key, error.description)
            }
        }
        region = try box("region")
        bounds = try box("bounds")
        if let c = try doubles("center", 2) {
            do { center = try Coordinate(latitude: c[1], longitude: c[0]).validated() } catch { throw bad("center", error.description) }
        } else {
            center = nil
        }
        centerZoom = object["center_zoom"] == nil ? nil : try int("center_zoom", TileSetMetadata.zooms)
        guard let build = object["build"] as? String else { throw bad("build", "is missing") }
        self.build = build
    }

    /// Numbers as "a,b,c" in their shortest exact form (see `json`).
    static func text(_ values: [Double]) -> String { values.map(\.description).joined(separator: ",") }

    /// "a,b,c" back into numbers; nil unless every part is a finite number.
    static func numbers(_ text: String) -> [Double]? {
        guard text.utf8.count <= 400 else { return nil }
        let values = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
        guard values.allSatisfy({ $0?.isFinite == true }) else { return nil }
        return values.compactMap { $0 }
    }

    static func encoding(_ object: [String: Any], _ bad: (String, String) -> PyramidError) throws(PyramidError) -> EncodingOptions {
        func number(_ key: String, _ range: ClosedRange<Double>) throws(PyramidError) -> Double {
            let parsed = (object[key] as? String).flatMap(numbers).flatMap { $0.count == 1 ? $0[0] : nil } ?? (object[key] as? NSNumber)?.doubleValue
            guard let value = parsed, value.isFinite, range.contains(value) else {
                throw bad("encoding.\(key)", "\(object[key].map { "\($0)" } ?? "(missing)") is not a number in \(range.lowerBound)-\(range.upperBound)")
            }
            return value
        }
        func whole(_ key: String, _ range: ClosedRange<Double>) throws(PyramidError) -> Int {
            guard let value = Int(exactly: try number(key, range)) else { throw bad("encoding.\(key)", "is not a whole number") }
            return value
        }
        switch object["format"] as? String {
        case "png":
            let filters: [String: PNGFilter] = ["none": .none, "sub": .sub, "up": .up, "average": .average, "paeth": .paeth, "all": .all]
            guard let name = object["filter"] as? String, let filter = filters[name] else { throw bad("encoding.filter", "is not a PNG filter") }
            return .png(compressionLevel: try whole("level", 0...9), filter: filter)
        case "jpg":
            guard let c = (object["background"] as? String).flatMap(numbers), c.count == 4, c.allSatisfy({ (0...1).contains($0) }) else {
                throw bad("encoding.background", "is not four numbers in 0-1")
            }
            return .jpeg(quality: try whole("quality", 1...100), background: Color(red: c[0], green: c[1], blue: c[2], alpha: c[3]))
        case "webp":
            guard let lossless = object["lossless"] as? Bool else { throw bad("encoding.lossless", "is not true or false") }
            return .webp(quality: try number("quality", 0...100), lossless: lossless, method: try whole("method", 0...6))
        default:
            throw bad("encoding.format", "\(object["format"].map { "\($0)" } ?? "(missing)") is not png, jpg or webp")
        }
    }
}

/// `ShardRecord.json`, field by field, in the names `init(json:file:)` reads.
private struct ShardRecordJSON: Encodable {
    /// How the record's tiles are encoded: `{"format": "png", "level": 1, "filter": "none"}`,
    /// `{"format": "jpg", "quality": 85, "background": "1.0,1.0,1.0,1.0"}` or
    /// `{"format": "webp", "quality": "80.0", "lossless": false, "method": 4}`.
    struct Encoding: Encodable {
        /// A JPEG's quality is a whole number; a WebP's is fractional, written as text (see `json`).
        enum Quality: Encodable {
            case whole(Int), text(String)

            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .whole(let n): try container.encode(n)
                case .text(let t): try container.encode(t)
                }
            }
        }

        var format: String
        var level: Int?
        var filter: String?
        var quality: Quality?
        var background: String?
        var lossless: Bool?
        var method: Int?

        init(_ encoding: EncodingOptions) {
            switch encoding {
            case .png(let level, let filter):
                format = "png"; self.level = level; self.filter = "\(filter)"
            case .jpeg(let quality, let background):
                format = "jpg"; self.quality = .whole(quality)
                self.background = ShardRecord.text([background.red, background.green, background.blue, background.alpha])
            case .webp(let quality, let lossless, let method):
                format = "webp"; self.quality = .text(ShardRecord.text([quality])); self.lossless = lossless; self.method = method
            }
        }
    }

    var version = ShardRecord.currentVersion
    var command: String
    var shard: String
    var splitZoom: Int
    var minZoom: Int
    var maxZoom: Int
    var mergeMakesUpperZooms: Bool
    var encoding: Encoding
    var tileSize: Int
    var scale: Int
    var region: String
    var bounds: String
    var center: String?
    var centerZoom: Int?
    var build: String

    enum CodingKeys: String, CodingKey {
        case version, command, shard, encoding, scale, region, bounds, center, build
        case splitZoom = "split_zoom", minZoom = "minzoom", maxZoom = "maxzoom", mergeMakesUpperZooms = "merge_makes_upper_zooms"
        case tileSize = "tile_size", centerZoom = "center_zoom"
    }

    init(_ record: ShardRecord) {
        command = record.command.rawValue
        shard = record.shard.description
        splitZoom = record.splitZoom
        minZoom = record.zooms.lowerBound
        maxZoom = record.zooms.upperBound
        mergeMakesUpperZooms = record.mergeMakesUpperZooms
        encoding = Encoding(record.encoding)
        tileSize = record.tileSize
        scale = record.scale
        region = ShardRecord.text([record.region.west, record.region.south, record.region.east, record.region.north])
        bounds = ShardRecord.text([record.bounds.west, record.bounds.south, record.bounds.east, record.bounds.north])
        center = record.center.map { ShardRecord.text([$0.longitude, $0.latitude]) }
        centerZoom = record.centerZoom
        build = record.build
    }
}
