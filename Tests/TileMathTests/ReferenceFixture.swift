import Foundation

/// Cases answered by mercantile and geographiclib (scripts/make-tilemath-fixture.py).
/// Rows are heterogeneous JSON arrays; accessors read them by position.
struct ReferenceFixture: @unchecked Sendable {  // immutable after loading
    let root: [String: Any]

    static let shared: ReferenceFixture = {
        let url = Bundle.module.url(forResource: "reference", withExtension: "json", subdirectory: "Fixtures")!
        let data = try! Data(contentsOf: url)
        return ReferenceFixture(root: try! JSONSerialization.jsonObject(with: data) as! [String: Any])
    }()

    func rows(_ key: String) -> [[Any]] { root[key] as! [[Any]] }
    func objects(_ key: String) -> [[String: Any]] { root[key] as! [[String: Any]] }
}

extension Array where Element == Any {
    func double(_ index: Int) -> Double { (self[index] as! NSNumber).doubleValue }
    func int(_ index: Int) -> Int { (self[index] as! NSNumber).intValue }
}
