/** The URL-encoded `bucket/key` that CopyObject and UploadPartCopy take as their source. */
export function copySourceOf(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}
