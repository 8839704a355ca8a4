import Foundation
import PMTiles

extension HTTPPMTilesSource {
    /// Opens the file at `url` (reads its header, root directory and metadata), blocking
    /// the calling thread until then, for callers that open stores from synchronous code
    /// (map projects, the CLI); async callers use `open(url:)`. Errors name the URL (without
    /// its query): `.invalid` for a URL that is not http(s) of a `.pmtiles`; `.unreadable`
    /// for a server that cannot be reached, stalls, answers 5xx after the retries, has no
    /// such file (404), refuses, ignores `Range` or sends fewer bytes than asked; `.corrupt`
    /// for a body that is not a valid PMTiles v3 file.
    /// - Parameter directoryCacheBytes: memory for parsed leaf directories (about 24 bytes an entry).
    public convenience init(url text: String, options: RemoteOptions = .rangeReads(), directoryCacheBytes: Int = 64 << 20) throws(TileSourceError) {
        let reader = try Self.reader(text, options: options)
        let archive = try Self.opened(try reader.readBlocking(offset: 0, length: Self.headLength, expecting: nil), reader: reader, number: 0)
        var stored = Self.metadataInHead(archive)
        if stored == nil {
            let range = archive.layout.metadataRange
            stored = try Self.metadata(try reader.readBlocking(offset: range.offset, length: range.length, expecting: archive.version), reader: reader)
        }
        try self.init(reader: reader, archive: archive, storedMetadata: stored ?? [], directoryCacheBytes: directoryCacheBytes)
    }

    /// Opens the file at `url` as `init(url:)` does, without blocking a thread.
    public static func open(url text: String, options: RemoteOptions = .rangeReads(), directoryCacheBytes: Int = 64 << 20) async throws -> HTTPPMTilesSource {
        let reader = try reader(text, options: options)
        let archive = try opened(try await reader.read(offset: 0, length: headLength, expecting: nil), reader: reader, number: 0)
        var stored = metadataInHead(archive)
        if stored == nil {
            let range = archive.layout.metadataRange
            stored = try metadata(try await reader.read(offset: range.offset, length: range.length, expecting: archive.version), reader: reader)
        }
        return try HTTPPMTilesSource(reader: reader, archive: archive, storedMetadata: stored ?? [], directoryCacheBytes: directoryCacheBytes)
    }

    /// Reads the first bytes of the file again, blocking, into an archive numbered `number`.
    static func openBlocking(_ reader: HTTPRangeReader, number: Int) throws(TileSourceError) -> Archive {
        try opened(try reader.readBlocking(offset: 0, length: headLength, expecting: nil), reader: reader, number: number)
    }

    private static func reader(_ text: String, options: RemoteOptions) throws(TileSourceError) -> HTTPRangeReader {
        guard let url = pmtilesURL(text) else {
            throw .invalid("\"\(text)\" is not an http:// or https:// URL of a .pmtiles file")
        }
        guard !options.userAgent.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalid("\(HTTPRangeReader.displayName(url)): range requests need a User-Agent that identifies the application")
        }
        return HTTPRangeReader(url: url, options: options)
    }

    /// The archive the answer to the first read makes, or the error that names the URL.
    private static func opened(_ answer: RangeAnswer, reader: HTTPRangeReader, number: Int) throws(TileSourceError) -> Archive {
        switch answer {
        case .bytes(let head, let version): return try archive(head: head, version: version, number: number, name: reader.name)
        case .missing(let status): throw .unreadable(path: reader.name, reason: "no such file on the server (HTTP \(status))")
        case .unavailable(_, let reason), .replaced(let reason): throw .unreadable(path: reader.name, reason: reason)
        }
    }

    /// The stored metadata when it lies in the first bytes read (TileKit's and go-pmtiles'
    /// writers put it right after the root); nil when it needs a request of its own.
    private static func metadataInHead(_ archive: Archive) -> [UInt8]? {
        let range = archive.layout.metadataRange
        guard range.length > 0 else { return [] }
        guard range.offset <= UInt64(archive.head.count), range.length <= archive.head.count - Int(range.offset) else { return nil }
        return Array(archive.head[Int(range.offset)..<Int(range.offset) + range.length])
    }

    private static func metadata(_ answer: RangeAnswer, reader: HTTPRangeReader) throws(TileSourceError) -> [UInt8] {
        switch answer {
        case .bytes(let bytes, _): return bytes
        case .missing(let status): throw .unreadable(path: reader.name, reason: "the file went away while it was opened (HTTP \(status))")
        case .replaced(let why): throw .unreadable(path: reader.name, reason: "the file changed while it was opened: \(why)")
        case .unavailable(_, let reason): throw .unreadable(path: reader.name, reason: reason)
        }
    }
}
