// wasi.js -- the smallest WASI (preview 1) that the trainer compiled for wasm32-wasi needs,
// the same file in node and in a page (the live edition):
//   const wasi = new LiveWasi({args: ['transformer', 'figure-data', 'lr'], files: {}});
//   const {instance} = await WebAssembly.instantiate(bytes, {wasi_snapshot_preview1: wasi.imports});
//   const status = wasi.start(instance);   // wasi.stdout, wasi.stderr: the text written
// The program's arguments, its standard output and error captured as text, the clocks,
// random bytes, a standard input, and a file system held in memory: files is
// {'/path': Uint8Array}, under one preopened directory "/", read-only but for the files the
// program creates with fopen's "w" (a log), kept in files as they grow; onWrite(fd, text)
// sees the standard output and error as they come. Everything else answers ENOSYS, so a call the program
// was not expected to make shows as an error instead of passing silently.
'use strict';

const ERRNO = {SUCCESS: 0, BADF: 8, INVAL: 28, NOENT: 44, NOSYS: 52, ROFS: 69};
const FILETYPE = {DIRECTORY: 3, REGULAR_FILE: 4, CHARACTER_DEVICE: 2};
const ROOT_FD = 3;   // the one preopened directory

// proc_exit unwinds the program by this exception; start() turns it into the status.
class WasiExit extends Error {
    constructor(status) { super(`exit ${status}`); this.status = status; }
}

class LiveWasi {
    constructor({args = [], env = {}, files = {}, stdin = '', onWrite = null} = {}) {
        this.args = args;
        this.env = Object.entries(env).map(([k, v]) => `${k}=${v}`);
        this.files = files;
        this.given = new Set(Object.keys(files));   // read-only: the program may not replace them
        this.stdout = '';
        this.stderr = '';
        this.onWrite = onWrite;   // called with (fd, text) as the program writes to 1 or 2
        this.decoder = new TextDecoder('utf-8');
        this.encoder = new TextEncoder();
        // fd -> {data, position}: standard input (text or bytes), then the files path_open opens
        const input = typeof stdin === 'string' ? this.encoder.encode(stdin) : stdin;
        this.open = new Map([[0, {data: input, position: 0}]]);
        this.nextFd = ROOT_FD + 1;
        this.imports = this.makeImports();
    }

    // Run the compiled module program once with these arguments (after the program's
    // name), files and standard input: {status, stdout, stderr, ms}, ms the milliseconds
    // it took.
    static run(program, args, files = {}, stdin = '') {
        const wasi = new LiveWasi({args: ['transformer', ...args], files, stdin});
        const started = performance.now();
        const instance = new WebAssembly.Instance(program, {wasi_snapshot_preview1: wasi.imports});
        const status = wasi.start(instance);
        return {status, stdout: wasi.stdout, stderr: wasi.stderr, ms: performance.now() - started};
    }

    start(instance) {
        this.memory = instance.exports.memory;
        try {
            instance.exports._start();
            return 0;
        } catch (e) {
            if (e instanceof WasiExit) return e.status;
            throw e;
        }
    }

    view() { return new DataView(this.memory.buffer); }
    bytes() { return new Uint8Array(this.memory.buffer); }

    // Write the strings, each NUL-terminated, at buf and their addresses at pointers.
    putStrings(strings, pointers, buf) {
        const view = this.view(), bytes = this.bytes();
        for (const s of strings) {
            view.setUint32(pointers, buf, true);
            pointers += 4;
            const encoded = this.encoder.encode(s + '\0');
            bytes.set(encoded, buf);
            buf += encoded.length;
        }
        return ERRNO.SUCCESS;
    }
    putSizes(strings, countAt, sizeAt) {
        const view = this.view();
        view.setUint32(countAt, strings.length, true);
        const size = strings.reduce((n, s) => n + this.encoder.encode(s).length + 1, 0);
        view.setUint32(sizeAt, size, true);
        return ERRNO.SUCCESS;
    }

    // The scatter/gather buffers of fd_write and fd_read: [{at, length}].
    iovecs(iovs, count) {
        const view = this.view(), list = [];
        for (let i = 0; i < count; i++)
            list.push({at: view.getUint32(iovs + 8 * i, true),
                       length: view.getUint32(iovs + 8 * i + 4, true)});
        return list;
    }

    fdWrite(fd, iovs, count, written) {
        const file = this.open.get(fd);
        if (file && file.written) return this.fileWrite(file, iovs, count, written);
        if (fd !== 1 && fd !== 2) return ERRNO.BADF;
        let total = 0, text = '';
        for (const {at, length} of this.iovecs(iovs, count)) {
            // stream: a UTF-8 character may be cut between two buffers
            text += this.decoder.decode(this.bytes().subarray(at, at + length), {stream: true});
            total += length;
        }
        if (fd === 1) this.stdout += text; else this.stderr += text;
        if (this.onWrite) this.onWrite(fd, text);
        this.view().setUint32(written, total, true);
        return ERRNO.SUCCESS;
    }

    // A file the program created: its bytes appended, kept in this.files under its name.
    fileWrite(file, iovs, count, written) {
        let total = 0;
        for (const {at, length} of this.iovecs(iovs, count)) {
            const grown = new Uint8Array(file.data.length + length);
            grown.set(file.data);
            grown.set(this.bytes().subarray(at, at + length), file.data.length);
            file.data = this.files[file.written] = grown;
            total += length;
        }
        this.view().setUint32(written, total, true);
        return ERRNO.SUCCESS;
    }

    fdRead(fd, iovs, count, read) {
        const file = this.open.get(fd);
        let total = 0;
        if (file) {
            for (const {at, length} of this.iovecs(iovs, count)) {
                const chunk = file.data.subarray(file.position, file.position + length);
                this.bytes().set(chunk, at);
                file.position += chunk.length;
                total += chunk.length;
                if (chunk.length < length) break;
            }
        } else return ERRNO.BADF;
        this.view().setUint32(read, total, true);
        return ERRNO.SUCCESS;
    }

    pathOpen(dirFd, dirflags, path, pathLength, oflags, rightsBase, rightsInh, fdflags, fdAt) {
        if (dirFd !== ROOT_FD) return ERRNO.BADF;
        const name = ('/' + this.decoder.decode(this.bytes().slice(path, path + pathLength)))
            .replace(/^\/+/, '/');
        if (oflags === 9 && !this.given.has(name)) {   // fopen's "w": a new file, in memory
            const fd = this.nextFd++;
            this.files[name] = new Uint8Array(0);
            this.open.set(fd, {data: this.files[name], position: 0, written: name});
            this.view().setUint32(fdAt, fd, true);
            return ERRNO.SUCCESS;
        }
        if (oflags !== 0) return ERRNO.ROFS;   // O_EXCL, O_DIRECTORY...: not for this program
        const data = this.files[name];
        if (data === undefined) return ERRNO.NOENT;
        const fd = this.nextFd++;
        this.open.set(fd, {data, position: 0});
        this.view().setUint32(fdAt, fd, true);
        return ERRNO.SUCCESS;
    }

    fdSeek(fd, offset, whence, newAt) {
        const file = this.open.get(fd);
        if (!file) return ERRNO.BADF;
        const base = [0, file.position, file.data.length][whence];
        const position = Number(BigInt(base) + offset);
        if (base === undefined || position < 0) return ERRNO.INVAL;
        file.position = position;
        this.view().setBigUint64(newAt, BigInt(position), true);
        return ERRNO.SUCCESS;
    }

    fdFdstatGet(fd, at) {
        const type = fd <= 2 ? FILETYPE.CHARACTER_DEVICE
                   : fd === ROOT_FD ? FILETYPE.DIRECTORY
                   : this.open.has(fd) ? FILETYPE.REGULAR_FILE : null;
        if (type === null) return ERRNO.BADF;
        const view = this.view();
        view.setUint8(at, type);
        view.setUint16(at + 2, 0, true);
        view.setBigUint64(at + 8, 0xffffffffffffffffn, true);   // every right; refused on use
        view.setBigUint64(at + 16, 0xffffffffffffffffn, true);
        return ERRNO.SUCCESS;
    }

    fdFilestatGet(fd, at) {
        const file = this.open.get(fd);
        if (!file && fd > 2) return ERRNO.BADF;
        const regular = file && fd > 2;
        const bytes = this.bytes();
        bytes.fill(0, at, at + 64);
        const view = this.view();
        view.setUint8(at + 16, regular ? FILETYPE.REGULAR_FILE : FILETYPE.CHARACTER_DEVICE);
        view.setBigUint64(at + 32, BigInt(regular ? file.data.length : 0), true);
        return ERRNO.SUCCESS;
    }

    clockTimeGet(id, precision, at) {
        // 0: the realtime clock; 1..3: monotonic and the process clocks, all from one counter
        const now = typeof performance !== 'undefined' ? performance.now() : Date.now();
        const ns = id === 0 ? BigInt(Date.now()) * 1000000n : BigInt(Math.round(now * 1e6));
        this.view().setBigUint64(at, ns, true);
        return ERRNO.SUCCESS;
    }

    randomGet(at, length) {
        globalThis.crypto.getRandomValues(this.bytes().subarray(at, at + length));
        return ERRNO.SUCCESS;
    }

    makeImports() {
        const nosys = () => ERRNO.NOSYS;
        return {
            args_get: (p, b) => this.putStrings(this.args, p, b),
            args_sizes_get: (c, s) => this.putSizes(this.args, c, s),
            environ_get: (p, b) => this.putStrings(this.env, p, b),
            environ_sizes_get: (c, s) => this.putSizes(this.env, c, s),
            fd_write: (...a) => this.fdWrite(...a),
            fd_read: (...a) => this.fdRead(...a),
            fd_seek: (...a) => this.fdSeek(...a),
            fd_close: fd => (this.open.delete(fd) || fd <= ROOT_FD ? ERRNO.SUCCESS : ERRNO.BADF),
            fd_fdstat_get: (...a) => this.fdFdstatGet(...a),
            fd_fdstat_set_flags: nosys,
            fd_filestat_get: (...a) => this.fdFilestatGet(...a),
            fd_prestat_get: (fd, at) => {
                if (fd !== ROOT_FD) return ERRNO.BADF;
                this.view().setUint8(at, 0);            // a directory
                this.view().setUint32(at + 4, 1, true); // named "/", one byte
                return ERRNO.SUCCESS;
            },
            fd_prestat_dir_name: (fd, at, length) => {
                if (fd !== ROOT_FD) return ERRNO.BADF;
                this.bytes()[at] = 0x2f;   // "/"
                return ERRNO.SUCCESS;
            },
            path_open: (...a) => this.pathOpen(...a),
            path_filestat_get: nosys,
            // the file system is read-only and has no directories to list
            fd_readdir: nosys,
            path_readlink: nosys,
            path_remove_directory: () => ERRNO.ROFS,
            path_unlink_file: () => ERRNO.ROFS,
            clock_time_get: (...a) => this.clockTimeGet(...a),
            clock_res_get: (id, at) => { this.view().setBigUint64(at, 1000n, true); return 0; },
            random_get: (...a) => this.randomGet(...a),
            sched_yield: () => ERRNO.SUCCESS,
            poll_oneoff: nosys,
            proc_raise: nosys,
            proc_exit: status => { throw new WasiExit(status); },
        };
    }
}

if (typeof module !== 'undefined') module.exports = {LiveWasi, WasiExit};
else globalThis.LiveWasi = LiveWasi;
