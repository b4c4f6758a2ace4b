/**
 * Which cache holds the dataset: the OS page cache (LRU-like) or an application cache that never evicts (MinIO,
 * CoorDL). Apart from the model so that whatif's --help names them without loading it.
 */
export const CACHE_POLICIES = ['page-cache', 'minio'] as const;

/** One of CACHE_POLICIES. */
export type CachePolicy = (typeof CACHE_POLICIES)[number];
