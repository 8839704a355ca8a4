/// Why the libmicrohttpd adapter could not listen.
public enum HTTPServerError: Error, CustomStringConvertible {
    case cannotStart(host: String, port: Int)
    case badHost(String)

    public var description: String {
        switch self {
        case .cannotStart(let host, let port): return "cannot listen on \(host):\(port) (in use, or not an address of this machine)"
        case .badHost(let host): return "host \"\(host)\" is not an IPv4 address (such as 127.0.0.1 or 0.0.0.0)"
        }
    }
}
