import Foundation
internal import CZlib

/// A compression failure, naming what zlib said.
public struct CompressionError: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { "gzip: \(reason)" }
}

/// gzip (RFC 1952) through zlib, for PMTiles directories and metadata and HTTP bodies.
public enum Gzip {
    /// zlib's window bits: 15 (32 KB window) + 16 asks for a gzip wrapper.
    private static let gzipWindow: Int32 = 15 + 16
    /// 15 + 32 lets inflate detect gzip or zlib from the header.
    private static let autoWindow: Int32 = 15 + 32

    /// Compresses bytes; `level` 0-9 (6 is zlib's default balance).
    public static func compress(_ bytes: [UInt8], level: Int = 6) -> [UInt8] {
        var stream = z_stream()
        // deflateInit2 is a macro: call the function it expands to, with the version and size check.
        let status = deflateInit2_(&stream, Int32(level), Z_DEFLATED, gzipWindow, 8, Z_DEFAULT_STRATEGY,
                                   ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "deflateInit2 failed: \(status)")
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 32)
        var input = bytes
        let produced: Int = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                let result = deflate(&stream, Z_FINISH)
                precondition(result == Z_STREAM_END, "deflate with a deflateBound buffer did not finish: \(result)")
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        return Array(output.prefix(produced))
    }

    /// Decompresses gzip (or zlib) bytes; throws on corrupt or truncated input, or when the
    /// output would exceed `limit` bytes (a guard against decompression bombs).
    public static func decompress(_ bytes: [UInt8], limit: Int = 256 << 20) throws(CompressionError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, autoWindow, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CompressionError(reason: "inflateInit2 failed")
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: max(4096, bytes.count * 4))
        var input = bytes
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = UInt32(inBuffer.count)
            while status == Z_OK {
                let written: Int = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return outBuffer.count - Int(stream.avail_out)
                }
                output.append(contentsOf: chunk.prefix(written))
                if output.count > limit { status = Z_MEM_ERROR; break }
                if status == Z_BUF_ERROR && stream.avail_in == 0 { break }
                if status == Z_BUF_ERROR { status = Z_OK }
            }
        }
        guard status == Z_STREAM_END else {
            if output.count > limit { throw CompressionError(reason: "output larger than \(limit) bytes") }
            let message = stream.msg.map { String(cString: $0) } ?? (status == Z_BUF_ERROR || status == Z_OK ? "truncated input" : "error \(status)")
            throw CompressionError(reason: message)
        }
        return output
    }
}
