/**
 * `node supervise.cjs <command> [args…]`: runs a command and takes down this whole process group
 * (the command and anything it forked, e.g. the java child of the Firestore emulator's launcher)
 * when told to stop, when the command exits, or when the process that started the supervisor
 * goes away, even by SIGKILL. Started detached, so a Ctrl-C in the terminal reaches only the
 * parent, which then exports the emulator's data before it stops it.
 */
const { spawn } = require("node:child_process");

const [command, ...args] = process.argv.slice(2);
const parent = process.ppid;
const child = spawn(command, args, { stdio: ["ignore", "inherit", "inherit"] });
let stopping = false;

function stopGroup() {
  if (stopping) return;
  stopping = true;
  signalGroup("SIGTERM");
  setTimeout(() => {
    signalGroup("SIGKILL");
    process.exit(1);
  }, 8000).unref();
}

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, stopGroup);
setInterval(() => {
  if (process.ppid !== parent) stopGroup();
}, 500).unref();
child.on("error", (error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => {
  // Anything the command left behind in this group goes with it.
  stopping = true;
  signalGroup("SIGTERM");
  process.exit(code ?? (signal ? 128 : 1));
});

/** Signals every process of this group; the supervisor's own handlers ignore it once stopping. */
function signalGroup(signal) {
  try {
    process.kill(-process.pid, signal);
  } catch {
    child.kill(signal);
  }
}
