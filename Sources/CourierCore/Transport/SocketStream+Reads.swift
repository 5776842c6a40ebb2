import CUV
import Glibc

/// How a socket's reads arrive: into the loop's shared buffer, or, once an exchange's body
/// consumer offered it (`ReadLanding`), into that consumer's zone or into arrays made for it.
extension SocketStream {
    // The callbacks borrow the stream (`_withUnsafeGuaranteedRef`: no retain and release per
    // read; libuv's handle holds a retain until its close callback).
    static let onAlloc: uv_alloc_cb = { handle, _, buffer in
        Unmanaged<SocketStream>.fromOpaque(handle!.pointee.data)._withUnsafeGuaranteedRef { $0.giveReadBuffer(buffer!) }
    }

    static let onRead: uv_read_cb = { stream, nread, buffer in
        Unmanaged<SocketStream>.fromOpaque(stream!.pointee.data)._withUnsafeGuaranteedRef {
            $0.didRead(nread, into: buffer!.pointee.base)
        }
    }

    /// Where the next read goes: the loop's buffer, or a landing zone once an exchange's
    /// consumer offered one.
    @inline(__always)
    private func giveReadBuffer(_ buffer: UnsafeMutablePointer<uv_buf_t>) {
        if _slowPath(readLanding != nil), let landing = readLanding {
            if landing.readArrayCapacity > 0 {
                // One byte for libuv (which reads only into memory it is given up front); the
                // rest goes straight into an array made for it.
                landingInUse = landing
                arrayRead = true
                buffer.pointee = uv_buf_init(LoopReadBuffers.socket(of: uvLoop).assumingMemoryBound(to: CChar.self), 1)
                return
            }
            if let zone = landing.landingZone() {
                landingInUse = landing
                buffer.pointee = uv_buf_init(zone.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(zone.count))
                return
            }
        }
        buffer.pointee = uv_buf_init(LoopReadBuffers.socket(of: uvLoop).assumingMemoryBound(to: CChar.self),
                                     UInt32(LoopReadBuffers.socketSize))
    }

    @inline(__always)
    private func didRead(_ nread: Int, into base: UnsafeMutablePointer<CChar>?) {
        if _slowPath(landingInUse != nil) { return didReadIntoZone(nread, into: base) }
        receive(nread, at: base)
    }

    /// A read into a landing zone: processed like any other, then the zone goes back, whatever
    /// the read brought (bytes, the end, an error).
    @inline(never)
    private func didReadIntoZone(_ nread: Int, into base: UnsafeMutablePointer<CChar>?) {
        let landing = landingInUse!
        landingInUse = nil
        if arrayRead {
            arrayRead = false
            if nread > 0, let base { readIntoArray(first: base, landing: landing) } else { receive(nread, at: base) }
        } else {
            receive(nread, at: base)
        }
        landing.landed()
    }

    /// After libuv's one byte: an array sized to what the socket holds (FIONREAD, up to the
    /// consumer's bound) takes the byte and the rest, and goes up whole. A failure of this `recv`
    /// (a reset that came between the two reads: the socket tells it once) is reported after the
    /// bytes, as libuv reports its own; an end it met is libuv's to find at its next read. (No
    /// descriptor: the byte goes up alone.)
    @inline(never)
    private func readIntoArray(first: UnsafeMutablePointer<CChar>, landing: ReadLanding) {
        guard let fd = socketDescriptor else { return receive(1, at: first) }
        var queued: Int32 = 0
        if ioctl(fd, UInt(FIONREAD), &queued) != 0 { queued = 0 }
        let capacity = max(1, min(landing.readArrayCapacity, 1 + Int(queued)))
        var failure: Int32 = 0
        let array = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            buffer[0] = UInt8(bitPattern: first.pointee)
            count = 1
            guard capacity > 1 else { return }
            let more = recv(fd, buffer.baseAddress! + 1, capacity - 1, Int32(MSG_DONTWAIT))
            if more > 0 {
                count += more
            } else if more < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                failure = errno
            }
        }
        landing.arrayArrived(array)
        array.withUnsafeBufferPointer { bytes in
            receive(bytes.count, at: UnsafeMutableRawPointer(mutating: bytes.baseAddress!).assumingMemoryBound(to: CChar.self))
        }
        // (libuv's codes are negative errnos.)
        if failure != 0 { receive(-Int(failure), at: nil) }
    }

    /// `nread` bytes (or the end, or an error) arrived at `base`: the loop's buffer or a landing zone.
    @inline(__always)
    private func receive(_ nread: Int, at base: UnsafeMutablePointer<CChar>?) {
        guard !closed, let delegate else { return }
        if nread > 0 {
            delegate.streamDidReceive(UnsafeRawBufferPointer(start: base, count: nread))
        } else if nread == Int(UV_EOF.rawValue) {
            delegate.streamDidEnd(resetInsteadOfEOF().map { .failed($0) } ?? .closed(closeNotify: nil))
        } else if nread < 0 {
            delegate.streamDidEnd(.failed(CourierError(.connectionReset, String(cString: uv_err_name(Int32(nread))))))
        }
    }

    /// libuv reports EOF, without reading again, when a partial read coincides with a hang-up;
    /// an RST that arrived with the data is then still pending in SO_ERROR. A reset is not a
    /// clean end (curl's 56, not 18), so ask the socket.
    private func resetInsteadOfEOF() -> CourierError? {
        guard let fd = socketDescriptor else { return nil }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == ECONNRESET else { return nil }
        return CourierError(.connectionReset, "ECONNRESET")
    }
}
