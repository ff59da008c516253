import {
  CompiledQuery,
  PostgresAdapter,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type Dialect,
  type Driver,
  type QueryResult,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';
import type { CellValue } from '../../normalize/table-def.ts';
import type { DuckDBSession } from './session.ts';

/**
 * A small Kysely dialect over one @duckdb/node-api connection. DuckDB speaks Postgres-flavoured SQL with
 * `$1` parameters, so Kysely's Postgres compiler is reused; the adapter drops Postgres advisory locks
 * (the DuckDB file is already locked by this process) and the introspector reads information_schema.
 */
class DuckDBAdapter extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

class DuckDBKyselyConnection implements DatabaseConnection {
  constructor(private readonly session: DuckDBSession) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, changes } = await this.session.runNow(query.sql, query.parameters as readonly CellValue[]);
    return { rows: rows as R[], numAffectedRows: BigInt(changes) };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported by the grantflow DuckDB dialect');
  }
}

/** Kysely takes the connection for a query or a whole transaction; the session queue serialises them. */
class DuckDBDriver implements Driver {
  private release: (() => void) | null = null;
  private readonly connection: DuckDBKyselyConnection;

  constructor(private readonly session: DuckDBSession) {
    this.connection = new DuckDBKyselyConnection(session);
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return new Promise((acquired) => {
      void this.session.exclusive(
        () =>
          new Promise<void>((done) => {
            this.release = done;
            acquired(this.connection);
          }),
      );
    });
  }

  async beginTransaction(): Promise<void> {
    await this.session.runNow('BEGIN TRANSACTION');
  }
  async commitTransaction(): Promise<void> {
    await this.session.runNow('COMMIT');
  }
  async rollbackTransaction(): Promise<void> {
    await this.session.runNow('ROLLBACK');
  }
  async releaseConnection(): Promise<void> {
    const done = this.release;
    this.release = null;
    done?.();
  }
  async destroy(): Promise<void> {}
}

class DuckDBIntrospector implements DatabaseIntrospector {
  constructor(private readonly session: DuckDBSession) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await this.session.runNow('SELECT DISTINCT schema_name FROM information_schema.schemata');
    return rows.map((r) => ({ name: String(r.schema_name) }));
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await this.session.runNow(
      `SELECT table_schema, table_name, table_type, column_name, data_type, is_nullable, column_default
         FROM information_schema.columns JOIN information_schema.tables USING (table_catalog, table_schema, table_name)
        WHERE table_catalog = current_database() ORDER BY table_schema, table_name, ordinal_position`,
    );
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const r of rows) {
      const key = `${String(r.table_schema)}.${String(r.table_name)}`;
      let t = tables.get(key);
      if (!t) {
        t = {
          name: String(r.table_name),
          schema: String(r.table_schema),
          isView: r.table_type === 'VIEW',
          columns: [],
        };
        tables.set(key, t);
      }
      t.columns.push({
        name: String(r.column_name),
        dataType: String(r.data_type),
        isNullable: r.is_nullable === 'YES',
        isAutoIncrementing: false,
        hasDefaultValue: r.column_default !== null,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}

export class DuckDBDialect implements Dialect {
  constructor(private readonly session: DuckDBSession) {}
  createAdapter(): PostgresAdapter {
    return new DuckDBAdapter();
  }
  createDriver(): Driver {
    return new DuckDBDriver(this.session);
  }
  createQueryCompiler(): PostgresQueryCompiler {
    return new PostgresQueryCompiler();
  }
  createIntrospector(): DatabaseIntrospector {
    return new DuckDBIntrospector(this.session);
  }
}
