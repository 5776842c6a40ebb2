/// The options curl applies to the whole command line wherever they appear ("This option is
/// global and does not need to be specified for each use of --next"): what the run shows, how
/// transfers are scheduled, the trace file.
enum GlobalOptions {
    /// Makes every group carry the global options given in any group.
    static func share(_ groups: inout [CommandLineOptions]) {
        guard groups.count > 1 else { return }
        let flags: [WritableKeyPath<CommandLineOptions, Bool>] = [
            \.parallel, \.silent, \.showError, \.verbose, \.forceProgressBar, \.help, \.manual, \.manPage, \.version,
            \.watchNetwork, \.flush, \.wifiOnly,
        ]
        for flag in flags {
            let set = groups.contains { $0[keyPath: flag] }
            for index in groups.indices { groups[index][keyPath: flag] = set }
        }
        let meter = groups.allSatisfy(\.progressBar)
        let parallelMax = groups.last { $0.parallelMax != CommandLineOptions().parallelMax }?.parallelMax
        let parallelMaxHost = groups.last { $0.parallelMaxHost != nil }?.parallelMaxHost
        let rate = groups.last { $0.rate != nil }?.rate
        let trace = groups.last { $0.traceFile != nil }?.traceFile
        let category = groups.last { $0.helpCategory != nil }?.helpCategory
        for index in groups.indices {
            groups[index].progressBar = meter
            if let parallelMax { groups[index].parallelMax = parallelMax }
            groups[index].parallelMaxHost = parallelMaxHost
            groups[index].rate = rate
            groups[index].traceFile = trace
            groups[index].helpCategory = category
        }
    }
}
