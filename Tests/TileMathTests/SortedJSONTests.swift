import Foundation
import Testing
import TileMath

@Suite struct SortedJSONTests {
    struct Sample: Encodable {
        var zoom: Int
        var path: String
        @NullIfAbsent var attribution: String?
        var note: String?
    }

    @Test func keysAreSortedAndSlashesKept() {
        let text = Sample(zoom: 10, path: "a/b.png", attribution: "© OSM", note: "x").sortedJSONText()
        #expect(text == #"{"attribution":"© OSM","note":"x","path":"a/b.png","zoom":10}"#)
    }

    /// `@NullIfAbsent` writes `null` where a plain optional leaves its key out.
    @Test func anAbsentValueIsNullOnlyWhenMarked() {
        #expect(Sample(zoom: 1, path: "", attribution: nil, note: nil).sortedJSONText() == #"{"attribution":null,"path":"","zoom":1}"#)
    }

    @Test func aNumberThatIsNotFiniteIsNoText() {
        struct Bad: Encodable { var value = Double.nan }
        #expect(Bad().sortedJSONText() == nil)
    }
}
