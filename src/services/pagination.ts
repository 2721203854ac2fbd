export interface Page {
  limit: number;
  offset: number;
}

export interface ListResult<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
}
