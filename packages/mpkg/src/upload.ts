import http from "node:http";
import https from "node:https";
import { problemOf } from "./problems";

/**
 * POSTs the package bytes to `/developers/modules/sign` in chunks, reporting progress; answers
 * the parsed JSON (or throws the problem). Plain node:http, since fetch reports no upload progress.
 */
export function uploadPackage(api: string, bearer: string, bytes: Buffer, onProgress?: (sent: number, total: number) => void, authorSignature?: string): Promise<unknown> {
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
          if (status >= 200 && status < 300) resolve(body);
          else reject(problemOf(body, new Response(null, { status, statusText: response.statusMessage })));
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
