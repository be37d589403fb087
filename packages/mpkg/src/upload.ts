import http from "node:http";
import https from "node:https";
import { randomUUID } from "node:crypto";
import { problemOf } from "./problems";

/**
 * POSTs the package bytes to `/developers/modules/sign` in chunks, reporting progress; answers
 * the parsed JSON (or throws the problem). Plain node:http, since fetch reports no upload progress.
 */
export async function uploadPackage(api: string, bearer: string, bytes: Buffer, onProgress?: (sent: number, total: number) => void, authorSignature?: string): Promise<unknown> {
  // One key for every attempt: a retry after a 503 signs once (contract §1, safe retries).
  const key = randomUUID();
  for (let attempt = 0; ; attempt += 1) {
    const answer = await uploadOnce(api, bearer, bytes, key, onProgress, authorSignature);
    if (answer.status !== 503 || attempt >= UPLOAD_RETRIES) return answer.result();
    await new Promise((resolve) => setTimeout(resolve, Math.min(answer.retryAfterSeconds, 10) * 1000));
  }
}

const UPLOAD_RETRIES = 2;

interface UploadAnswer {
  status: number;
  retryAfterSeconds: number;
  /** The parsed JSON of a 2xx, or the problem thrown. */
  result(): unknown;
}

function uploadOnce(api: string, bearer: string, bytes: Buffer, key: string, onProgress?: (sent: number, total: number) => void, authorSignature?: string): Promise<UploadAnswer> {
  const url = new URL(`${api.replace(/\/+$/, "")}/developers/modules/sign`);
  const transport = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: "POST",
        headers: {
          Authorization: `Bearer ${bearer}`,
          "Content-Type": "application/octet-stream",
          "Content-Length": bytes.length,
          "Idempotency-Key": key,
          ...(authorSignature ? { "X-Author-Signature": authorSignature } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          const status = response.statusCode ?? 0;
          const retryAfter = Number(response.headers["retry-after"]);
          resolve({
            status,
            retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 1,
            result: () => {
              if (status >= 200 && status < 300) return body;
              throw problemOf(body, new Response(null, { status, statusText: response.statusMessage }));
            },
          });
        });
      },
    );
    request.on("error", reject);
    const chunkSize = 256 * 1024;
    let sent = 0;
    const writeNext = () => {
      while (sent < bytes.length) {
        const chunk = bytes.subarray(sent, sent + chunkSize);
        sent += chunk.length;
        onProgress?.(sent, bytes.length);
        if (!request.write(chunk)) return void request.once("drain", writeNext);
      }
      request.end();
    };
    writeNext();
  });
}
