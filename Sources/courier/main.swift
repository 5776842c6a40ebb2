import Courier
import CourierCore
import Dispatch
import Glibc

// courier: a curl-compatible command line for the subset of curl Courier implements, with curl's
// exit codes. Every URL goes through Courier's shared queue and connection pool, so several URLs to
// one host reuse one connection (sequentially) or share the queue's width (with -Z). The flags and
// their help are in FlagTable; `-:`/`--next` starts another group of URLs with options of its own.

var groups: [CommandLineOptions]
do {
    groups = try ArgumentParser.parseGroups(Array(CommandLine.arguments.dropFirst()))
} catch {
    Terminal.error("courier: \(error.message)\ncourier: try 'courier --help' for more information\n")
    exit(error.code)
}
// The global options are the same in every group.
let global = groups[0]
if global.help {
    guard let text = FlagTable.help(global.helpCategory) else {
        Terminal.error("courier: unknown category provided, here is a list of all categories:\n\n" + (FlagTable.help("category") ?? ""))
        exit(ExitCode.usage)
    }
    Terminal.write(text)
    exit(0)
}
if global.manual || global.manPage {
    Terminal.write(global.manPage ? FlagTable.manPage(version: CourierVersion.string) : FlagTable.help("all")!)
    exit(0)
}
if global.version {
    Terminal.write(VersionText.text)
    exit(0)
}
if global.wifiOnly {
    SharedQueue.followNetwork(NetworkWidths(wifiOnly: true))
}
if global.watchNetwork {
    NetworkWatch.run(seconds: global.maxTime, urls: groups.flatMap(\.urls))
}
guard groups.contains(where: { !$0.urls.isEmpty }) || global.flush else {
    Terminal.error("courier: no URL specified!\ncourier: try 'courier --help' for more information\n")
    exit(ExitCode.usage)
}

// --trace-ascii is global: one file for every group.
let trace = GroupSetup.textLog(global.traceFile)
// curl draws its meter whether or not stderr is a terminal (a log shows it too); -s and
// --no-progress-meter turn it off, and -v's lines would be torn by it.
let progressAllowed = !global.silent && !global.verbose && global.progressBar
if global.parallel {
    SharedQueue.width = global.parallelMax
    SharedQueue.defaultHostLimit = global.parallelMaxHost ?? global.parallelMax
}
let parallelMeter = progressAllowed && global.parallel && !global.flush ? ParallelMeter() : nil
Terminal.meterLine = parallelMeter

let runs = groups.map { GroupSetup.make($0, trace: trace, showProgress: progressAllowed && !global.parallel, parallelMeter: parallelMeter) }
if global.flush {
    guard let journal = runs[0].context.journal else {
        Terminal.error("courier: --flush needs --outbox DIR\ncourier: try 'courier --help' for more information\n")
        exit(ExitCode.usage)
    }
    exit(OutboxFlush.run(journal, context: runs[0].context))
}

// A bounded window of transfers: enough to keep the queue's width busy with -Z, one at a time
// without it; results are reported in URL order either way, from the loop thread.
let window = global.parallel ? max(2 * global.parallelMax, 2) : 1
Terminal.bufferStdoutUnlessTerminal()
let exitCode = CLIRunner(urls: URLList(arguments: runs.flatMap(\.arguments)), window: window,
                         rate: global.parallel ? nil : global.rate, parallelMeter: parallelMeter).run()

for run in runs { run.finish() }
Terminal.flushStdout()
trace?.close()
// A clean shutdown (every connection closed, the loop thread joined) keeps valgrind runs of the
// CLI meaningful and costs well under a millisecond.
Runtime.shared.shutdown()
exit(exitCode)
