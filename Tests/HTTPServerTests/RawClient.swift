import Foundation

/// A client on a plain socket, so tests can send what no HTTP library would: half a head, a
/// body that never comes, bytes one at a time.
final class RawClient: @unchecked Sendable {  // one test uses it at a time; fd is immutable
    let fd: Int32

    /// `receiveTimeout` is generous: the whole suite runs at once on two cores, and a task
    /// that writes a chunk may wait seconds for a thread (tests assert progress, not speed).
    /// `source`: the loopback address to connect from (127.0.0.2, ...), to be another client.
    init(port: Int, receiveTimeout: Double = 20, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // No close here: every stored property is set, so deinit runs after the throw and
        // closes it. Closing twice would close whatever another test had opened meanwhile.
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - receiveTimeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    @discardableResult func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Bytes until the server closes or the receive timeout passes; `closed` tells which.
    func readAll() -> (text: String, closed: Bool) {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { data += buffer[0..<n]; continue }
            // Other tests start processes: their SIGCHLD interrupts a waiting recv.
            if n < 0 && errno == EINTR { continue }
            return (String(decoding: data, as: UTF8.self), n == 0 || errno == ECONNRESET)
        }
    }

    /// Bytes until `marker` shows up (or the server closes, or the timeout passes).
    func read(until marker: String) -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !String(decoding: data, as: UTF8.self).contains(marker) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            data += buffer[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Bytes until the head and `bytes` more have come (or the server closes, or the timeout passes).
    func read(bytes: Int) -> [UInt8] {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let end = data.firstRange(of: Array("\r\n\r\n".utf8)), data.count - end.upperBound >= bytes { return data }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return data }
            data += buffer[0..<n]
        }
    }

    func hangUp() { shutdown(fd, Int32(SHUT_RDWR)) }
}

/// Runs blocking socket work on a thread of its own. Tests wait for the server's tasks, and
/// those run on Swift's cooperative pool (one thread per core): a test blocked in `recv` on a
/// pool thread, with another suite doing the same, would starve the very tasks it waits for.
func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

extension RawClient {
    func readAll() async -> (text: String, closed: Bool) { await offPool { self.readAll() } }
    func read(until marker: String) async -> String { await offPool { self.read(until: marker) } }

    /// What each client got until `marker`, all read at once, in the clients' order: when the
    /// answers wait for tasks on a busy pool, the clients wait together, so the slowest one
    /// bounds the test, not the sum of their waits.
    static func read(_ clients: [RawClient], until marker: String) async -> [String] {
        await withTaskGroup(of: (Int, String).self) { group in
            for (index, client) in clients.enumerated() { group.addTask { (index, await client.read(until: marker)) } }
            var answers = [String](repeating: "", count: clients.count)
            for await (index, answer) in group { answers[index] = answer }
            return answers
        }
    }
}

/// A door tests open when they are ready: handlers wait at it without holding a thread.
actor Gate {
    private var isOpen = false
    private var waiting = [CheckedContinuation<Void, Never>]()

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }
}
