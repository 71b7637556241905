// The parts of autocannon's API the bench uses (the package ships no types).
declare module 'autocannon' {
  export interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
    total: number;
  }
  export interface RequestSpec {
    method?: string;
    path?: string;
    body?: string;
    headers?: Record<string, string>;
    setupRequest?: (request: RequestSpec, context: object) => RequestSpec;
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    requests?: RequestSpec[];
  }
  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
