import Foundation
import Testing
@testable import TileKitCLI

@Suite struct TileCommandTests {
    @Test func tileAt() async {
        let run = await CLIRun("tile at -9.14 53.3 --zoom 10")
        #expect(run.exitCode == 0 && run.output == [#"{"x":486,"y":332,"z":10}"#])
        #expect(await CLIRun("tile at -9.14,53.3 -z 10").output == run.output)
        #expect(await CLIRun("tile at -9.14,53.3 --zoom=10").output == run.output)
        let batch = await CLIRun("tile at - --zoom 1", stdin: ["-90 45", "", "90,-45"])
        #expect(batch.exitCode == 0 && batch.output == [#"{"x":0,"y":0,"z":1}"#, #"{"x":1,"y":1,"z":1}"#])
    }

    @Test func tileBounds() async {
        let run = await CLIRun("tile bounds 10/486/332")
        #expect(run.exitCode == 0)
        #expect(run.output == [#"{"east":-8.7890625,"north":53.33087298301705,"south":53.120405283106564,"west":-9.140625}"#])
        let meters = await CLIRun("tile bounds 0/0/0 --meters")
        #expect(meters.output == [#"{"east":20037508.342789244,"north":20037508.342789244,"south":-20037508.342789244,"west":-20037508.342789244}"#])
        #expect(await CLIRun("tile bounds -", stdin: ["1/0/0", "1/1/1"]).output.count == 2)
    }

    @Test func tileList() async {
        let run = await CLIRun("tile list --bbox -1,-1,1,1 --zoom 0-2")
        #expect(run.exitCode == 0)
        #expect(run.output == ["0/0/0", "1/0/0", "1/0/1", "1/1/0", "1/1/1", "2/1/1", "2/1/2", "2/2/1", "2/2/2"])
        let tms = await CLIRun("tile list --bbox -1,-1,1,1 --zoom 2 --tms")
        #expect(tms.output == ["2/1/2", "2/1/1", "2/2/2", "2/2/1"])
        let count = await CLIRun("tile list --bbox -73.9819,40.7644,-73.9493,40.8006 --zoom 13-16 --count")
        #expect(count.exitCode == 0 && count.output == [#"{"tiles":79,"zooms":[{"tiles":4,"zoom":13},{"tiles":6,"zoom":14},{"tiles":15,"zoom":15},{"tiles":54,"zoom":16}]}"#])
        // Zooms stay in numeric order past 9 (as text, "10" would sort before "9").
        let deep = await CLIRun("tile list --bbox -1,-1,1,1 --zoom 8-11 --count")
        #expect(deep.output == [#"{"tiles":200,"zooms":[{"tiles":4,"zoom":8},{"tiles":16,"zoom":9},{"tiles":36,"zoom":10},{"tiles":144,"zoom":11}]}"#])
        // An antimeridian box at zoom 0 lists the one tile once.
        #expect(await CLIRun("tile list --bbox 170,-10,-170,10 --zoom 0").output == ["0/0/0"])
        #expect(await CLIRun("tile list --bbox 170,-10,-170,10 --zoom 2").output == ["2/0/1", "2/0/2", "2/3/1", "2/3/2"])
        let batch = await CLIRun("tile list --bbox - --zoom 1 --count", stdin: ["-1,-1,1,1", "0,0,1,1"])
        #expect(batch.output == [#"{"tiles":4,"zooms":[{"tiles":4,"zoom":1}]}"#, #"{"tiles":1,"zooms":[{"tiles":1,"zoom":1}]}"#])
    }

    @Test func quadkeysParentsChildren() async {
        #expect(await CLIRun("tile quadkey 3/3/5").output == ["213"])
        #expect(await CLIRun("tile from-quadkey 213").output == ["3/3/5"])
        #expect(await CLIRun("tile quadkey 0/0/0").output == [""])
        #expect(await CLIRun("tile parent 3/3/5").output == ["2/1/2"])
        #expect(await CLIRun("tile parent 3/3/5 --zoom 1").output == ["1/0/1"])
        #expect(await CLIRun("tile children 1/1/0").output == ["2/2/0", "2/3/0", "2/3/1", "2/2/1"])
        #expect(await CLIRun("tile children 1/1/0 --zoom 3").output.count == 16)
        #expect(await CLIRun("tile from-quadkey -", stdin: ["0", "33"]).output == ["1/0/0", "2/3/3"])
    }

    /// Bad input exits 64 with a message that names the value.
    @Test(arguments: [
        ("tile at -73.97 95 --zoom 5", "latitude 95"),
        ("tile at -200 40.77 --zoom 5", "longitude -200"),
        ("tile at 40.77 -100 --zoom 5", "did you mean -100,40.77"),  // swapped
        ("tile at 10 20 --zoom -1", "zoom -1"),
        ("tile at 10 20 --zoom 31", "zoom 31"),
        ("tile at 10 20 --zoom x", "zoom \"x\""),
        ("tile at 10 --zoom 3", "coordinate \"10\""),
        ("tile at ten 20 --zoom 3", "longitude \"ten\""),
        ("tile at 10 20", "missing option --zoom"),
        ("tile at 10 20 --zoom 3 --bogus", "unknown option --bogus"),
        ("tile bounds 3/8/0", "x 8 is out of range [0, 7]"),
        ("tile bounds 3/0/-1", "y -1"),
        ("tile bounds 31/0/0", "zoom 31"),
        ("tile bounds banana", "\"banana\""),
        ("tile list --bbox 0,10,1,5 --zoom 3", "south 10 is greater than north 5"),
        ("tile list --bbox 0,0,1 --zoom 3", "not W,S,E,N"),
        ("tile list --bbox 0,0,1,1 --zoom 5-3", "5 is greater than 3"),
        ("tile list --bbox 0,0,1,95 --zoom 3", "north 95"),
        ("tile from-quadkey 0129", "unexpected digit \"9\""),
        ("tile parent 0/0/0", "has no parent"),
        ("tile children 30/0/0", "deepest zoom"),
        ("bogus", "unknown command \"bogus\""),
        ("tile bogus", "unknown subcommand \"bogus\""),
    ])
    func badInputExits64NamingTheValue(line: String, message: String) async {
        let run = await CLIRun(line)
        #expect(run.exitCode == 64, "\(line)")
        #expect(run.error.contains(message), "\(line): \(run.error)")
    }

    @Test func badStdinLineIsNamed() async {
        let run = await CLIRun("tile at - --zoom 3", stdin: ["1 2", "1 200"])
        #expect(run.exitCode == 64 && run.output.count == 1)
        #expect(run.error.contains("stdin line 2: latitude 200"))
    }

    @Test func everyCommandHasHelp() async {
        for command in TileKitCommand.commands {
            let run = await CLIRun(command.path + ["--help"])
            #expect(run.exitCode == 0 && run.output.joined().contains("Usage: tilekit \(command.path.joined(separator: " "))"))
        }
        #expect(await CLIRun("--help").output.joined(separator: "\n").contains("Exit codes"))
        #expect(await CLIRun("help tile at").output.joined().contains("Usage: tilekit tile at"))
        #expect(await CLIRun("tile --help").exitCode == 0)
        #expect(await CLIRun([String]()).exitCode == 64)
        #expect(await CLIRun("--version").output == ["tilekit \(TileKitCommand.version)"])
    }

    @Test func tokenizerKeepsNegativeNumbersPositional() async {
        #expect(Token.tokenize(["-73.97", "-", "--zoom=3", "-z", "--", "--x"]) == [
            .positional("-73.97"), .positional("-"), .option(name: "zoom", inlineValue: "3"),
            .option(name: "z", inlineValue: nil), .endOfOptions, .positional("--x"),
        ])
    }
}
