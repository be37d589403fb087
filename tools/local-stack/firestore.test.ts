import { createWriteStream, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ZipFile } from "yazl";
import { findFirestoreEmulator, firestoreCommand, type EmulatorSources } from "./firestore";
import { jarMainClass } from "./jar-manifest";

/** Where `npm start` takes the Firestore emulator from, on machines laid out in a temporary folder. */
describe("finding the Firestore emulator", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), "firestore-find-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const jar = async (file: string, manifest: string, compress = true) => {
    mkdirSync(path.dirname(file), { recursive: true });
    const zip = new ZipFile();
    zip.addBuffer(Buffer.from("not a class"), "com/example/Other.class", { compress });
    zip.addBuffer(Buffer.from(manifest), "META-INF/MANIFEST.MF", { compress });
    zip.end({ comment: "a comment, which the directory's end record is found past", forceZip64Format: false });
    await new Promise<void>((resolve, reject) => zip.outputStream.pipe(createWriteStream(file)).on("close", () => resolve()).on("error", reject));
    return file;
  };
  /** A google-cloud-cli install: bin/gcloud (linked from a PATH folder) and its platform jar. */
  const cloudSdk = async () => {
    const sdk = path.join(root, "google-cloud-sdk");
    mkdirSync(path.join(sdk, "bin"), { recursive: true });
    writeFileSync(path.join(sdk, "bin", "gcloud"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    mkdirSync(path.join(root, "usr-bin"));
    symlinkSync(path.join(sdk, "bin", "gcloud"), path.join(root, "usr-bin", "gcloud"));
    return jar(path.join(sdk, "platform", "cloud-firestore-emulator", "cloud-firestore-emulator.jar"), "Manifest-Version: 1.0\r\nCreated-By: createjars\r\n");
  };
  const sources = (overrides: Partial<EmulatorSources> = {}): EmulatorSources => ({
    env: {},
    cacheDir: path.join(root, "cache"),
    expectedJar: path.join(root, "cache", "cloud-firestore-emulator-v1.22.0.jar"),
    findOnPath: () => null,
    ...overrides,
  });
  const gcloudOnPath = (command: string) => (command === "gcloud" ? path.join(root, "usr-bin", "gcloud") : null);

  it("takes firebase-tools' cached jar first, the version this firebase-tools downloads over a newer one", async () => {
    await cloudSdk();
    const cache = path.join(root, "cache");
    await jar(path.join(cache, "cloud-firestore-emulator-v1.9.0.jar"), "Main-Class: Old\r\n");
    await jar(path.join(cache, "cloud-firestore-emulator-v1.22.0.jar"), "Main-Class: Expected\r\n");
    await jar(path.join(cache, "cloud-firestore-emulator-v1.23.1.jar"), "Main-Class: Newer\r\n");
    expect(findFirestoreEmulator(sources({ findOnPath: gcloudOnPath }))).toEqual({ kind: "jar", from: "firebase-tools", jar: path.join(cache, "cloud-firestore-emulator-v1.22.0.jar") });
    // Without the expected version, the newest (by version, not by name: 1.10 is newer than 1.9).
    rmSync(path.join(cache, "cloud-firestore-emulator-v1.22.0.jar"));
    rmSync(path.join(cache, "cloud-firestore-emulator-v1.23.1.jar"));
    await jar(path.join(cache, "cloud-firestore-emulator-v1.10.0.jar"), "Main-Class: Ten\r\n");
    writeFileSync(path.join(cache, "cloud-firestore-emulator-v1.99.0.jar.tmp"), "a download in progress");
    expect(findFirestoreEmulator(sources({ findOnPath: gcloudOnPath }))).toMatchObject({ jar: path.join(cache, "cloud-firestore-emulator-v1.10.0.jar") });
  });

  it("falls back to the google-cloud-cli's jar, then to nothing (firebase-tools then downloads)", async () => {
    const sdkJar = await cloudSdk();
    expect(findFirestoreEmulator(sources({ findOnPath: gcloudOnPath }))).toEqual({ kind: "jar", from: "google-cloud-cli", jar: sdkJar });
    rmSync(sdkJar);
    // A gcloud without the emulator component (its probe fails).
    expect(findFirestoreEmulator(sources({ findOnPath: gcloudOnPath }))).toBeNull();
    expect(findFirestoreEmulator(sources())).toBeNull();
  });

  it("lets FIRESTORE_EMULATOR_BIN override everything", async () => {
    await jar(path.join(root, "cache", "cloud-firestore-emulator-v1.22.0.jar"), "Main-Class: X\r\n");
    expect(findFirestoreEmulator(sources({ env: { FIRESTORE_EMULATOR_BIN: "/opt/emulator" } }))).toEqual({ kind: "override", command: "/opt/emulator" });
  });

  it("runs firebase-tools' executable jar as firebase-tools does, and the google-cloud-cli's class path as its script does", async () => {
    const executable = await jar(path.join(root, "cache", "cloud-firestore-emulator-v1.22.0.jar"), "Manifest-Version: 1.0\r\nMain-Class: com.google.cloud.datastore.emulator.firestore.CloudFirestore\r\n");
    const classPath = await cloudSdk();
    expect(jarMainClass(executable)).toBe("com.google.cloud.datastore.emulator.firestore.CloudFirestore");
    expect(jarMainClass(classPath)).toBeNull();
    expect(firestoreCommand({ kind: "jar", jar: executable, from: "firebase-tools" }, 8080, "/data/x.overall_export_metadata", "java")).toEqual({
      command: "java",
      args: ["-Duser.language=en", "-jar", executable, "--host", "127.0.0.1", "--port", "8080", "--seed_from_export", "/data/x.overall_export_metadata"],
    });
    expect(firestoreCommand({ kind: "jar", jar: classPath, from: "google-cloud-cli" }, 8080, undefined, "java")).toEqual({
      command: "java",
      args: ["-Duser.language=en", "-cp", classPath, "com.google.cloud.datastore.emulator.firestore.CloudFirestore", "start", "--host=127.0.0.1", "--port=8080", "--database-mode=firestore-native"],
    });
    // Stored (not deflated) manifests are read too.
    expect(jarMainClass(await jar(path.join(root, "stored.jar"), "Main-Class: Stored\r\n", false))).toBe("Stored");
    expect(jarMainClass(path.join(root, "cache", "..", "google-cloud-sdk", "bin", "gcloud"))).toBeNull();
  });
});
