import Testing
@testable import CourierCore

/// The head-time policy, step by step, without sockets: what the transfer's machine decides when a
/// response head arrives (cookies, redirect, status retry, cache, sink, delivery) and what a
/// request needs before it goes out on a connection.
@Suite("TransferStateMachine head")
struct TransferHeadTests {
    typealias Machine = TransferStateMachine
    typealias Facts = TransferStateMachine.HeadFacts

    static let hop = RedirectHop(url: try! CourierURL(parsing: "http://a.example/next"), method: .get,
                                 dropBody: false, crossOrigin: false)

    func running(validates: (conditional: Bool, staleOnError: Bool)? = nil) -> Machine {
        var m = Machine()
        if let validates { m.validates(conditional: validates.conditional, staleOnError: validates.staleOnError) }
        _ = m.accept(refusal: nil, queueDeadline: .max)
        _ = m.started(totalDeadline: .max)
        m.connectionAssigned()
        return m
    }

    func retryInput(now: UInt64 = 1_000) -> Machine.RetryInput {
        Machine.RetryInput(policy: RetryPolicy(count: 2, intervals: [.milliseconds(100)]), permitted: true, responseStarted: true,
                           now: now, random: 0.5)
    }

    @Test func aPlainHeadIsDeliveredAtOnce() {
        var m = running()
        #expect(m.headArrived(Facts(status: 200, flags: [])) == .deliver)
        #expect(m.head == nil, "nothing kept between steps")
    }

    @Test func cookiesComeFirstThenTheRedirect() {
        var m = running()
        #expect(m.headArrived(Facts(status: 302, flags: [.cookieJar, .followsRedirects, .statusListed, .cache])) == .storeCookies,
                "a redirect's cookies are kept before it is followed")
        #expect(m.cookiesStored() == .judgeRedirect)
        #expect(m.redirectJudged(.follow(Self.hop)) == .dropBody(.redirect), "a followed redirect is neither retried nor cached")
        #expect(m.head == nil)
        #expect(m.followsRedirect)
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .followRedirect(Self.hop))
    }

    @Test func theDelegateMayRefuseOrChangeARedirect() {
        var m = running()
        #expect(m.headArrived(Facts(status: 301, flags: [.followsRedirects, .asksAboutRedirects])) == .judgeRedirect)
        #expect(m.redirectJudged(.follow(Self.hop)) == .askAboutRedirect(Self.hop))
        let refusal = CourierError(.redirectRefused, "no")
        #expect(m.redirectAnswered(Self.hop, refusal: refusal) == .fail(refusal, keepsHead: false))
        #expect(!m.followsRedirect)
        var changed = running()
        _ = changed.headArrived(Facts(status: 301, flags: [.followsRedirects, .asksAboutRedirects]))
        _ = changed.redirectJudged(.follow(Self.hop))
        let other = RedirectHop(url: try! CourierURL(parsing: "http://b.example/"), method: .get, dropBody: false, crossOrigin: true)
        #expect(changed.redirectAnswered(other, refusal: nil) == .dropBody(.redirect))
        #expect(changed.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .followRedirect(other))
    }

    @Test func aRedirectTheRulesRefuseEndsTheTransfer() {
        var m = running()
        _ = m.headArrived(Facts(status: 302, flags: [.followsRedirects]))
        let tooMany = CourierError(.tooManyRedirects)
        #expect(m.redirectJudged(.fail(tooMany)) == .fail(tooMany, keepsHead: true), "kept as the last response, as curl reports it")
        var kept = running()
        _ = kept.headArrived(Facts(status: 302, flags: [.followsRedirects]))
        #expect(kept.redirectJudged(.deliver) == .deliver, "a 3xx the rules do not follow is the answer")
    }

    @Test func aListedStatusIsRetriedOnlyWhenApproved() {
        var m = running()
        #expect(m.headArrived(Facts(status: 503, flags: [.statusListed])) == .weighStatusRetry)
        #expect(m.statusRetryWeighed(input: retryInput(), retryAfter: .seconds(2)) == .askToRetry(status: 503, wait: 2_000))
        #expect(m.statusRetryAnswered(approved: true, wait: 2_000, now: 1_000) == .dropBody(.retry))
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .rewindSink)
        #expect(m.waitDeadline == 3_000)
        var refused = running()
        _ = refused.headArrived(Facts(status: 503, flags: [.statusListed]))
        _ = refused.statusRetryWeighed(input: retryInput(), retryAfter: nil)
        #expect(refused.statusRetryAnswered(approved: false, wait: 100, now: 1_000) == .deliver, "the 503 is the answer")
        var spent = running()
        _ = spent.headArrived(Facts(status: 503, flags: [.statusListed]))
        var notPermitted = retryInput()
        notPermitted.permitted = false
        #expect(spent.statusRetryWeighed(input: notPermitted, retryAfter: nil) == .deliver, "nobody is asked about a retry the policy would not make")
    }

    @Test func aCancelledExchangeRetriesNoStatus() {
        var m = running()
        _ = m.cancel(CourierError(.cancelled))
        #expect(m.headArrived(Facts(status: 503, flags: [.statusListed])) == .deliver)
    }

    @Test func aValidationLetsTheStoredResponseAnswer() {
        var m = running(validates: (conditional: true, staleOnError: false))
        #expect(m.headArrived(Facts(status: 304, flags: [.cache])) == .consultCache)
        #expect(m.cacheAnswered(updateSelectsStored: true) == .dropBody(.stored))
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finishFromStore(.notModified, releasing: .slot))
        var fresh = running(validates: (conditional: true, staleOnError: false))
        _ = fresh.headArrived(Facts(status: 200, flags: [.cache]))
        #expect(fresh.cacheAnswered(updateSelectsStored: false) == .prepareToStore, "a new representation may be stored")
        #expect(fresh.storePrepared() == .deliver)
        var stored = running()
        #expect(stored.headArrived(Facts(status: 200, flags: [.cache])) == .prepareToStore, "no validation: only the store")
    }

    @Test func aSinkThatDecidesFromTheHeadComesLast() {
        var m = running()
        #expect(m.headArrived(Facts(status: 206, flags: [.cache, .sinkDecides])) == .prepareToStore)
        #expect(m.storePrepared() == .consultSink)
        #expect(m.sinkAnswered(.restart) == .dropBody(.restart))
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .restartDownload)
        var whole = running()
        _ = whole.headArrived(Facts(status: 416, flags: [.sinkDecides]))
        #expect(whole.sinkAnswered(.alreadyWhole) == .dropBody(.alreadyWhole))
        #expect(whole.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finish(nil, releasing: .slot))
        var failing = running()
        _ = failing.headArrived(Facts(status: 200, flags: [.sinkDecides]))
        let error = CourierError(.rangeError)
        #expect(failing.sinkAnswered(.fail(error)) == .fail(error, keepsHead: false))
        var taking = running()
        _ = taking.headArrived(Facts(status: 200, flags: [.sinkDecides]))
        #expect(taking.sinkAnswered(.proceed) == .deliver)
    }

    @Test func aConnectionPreparesCookiesAndRanges() {
        func assigned(jar: Bool, resumable: Bool) -> Machine.Preparation {
            var m = Machine()
            _ = m.accept(refusal: nil, queueDeadline: .max)
            _ = m.started(totalDeadline: .max)
            return m.connectionAssigned(cookieJar: jar, resumableDownload: resumable)
        }
        #expect(assigned(jar: false, resumable: false) == [])
        #expect(assigned(jar: true, resumable: false) == [.sendCookies])
        #expect(assigned(jar: true, resumable: true) == [.sendCookies, .rangeFromDownload])
    }
}
