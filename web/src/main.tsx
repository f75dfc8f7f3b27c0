import { render } from 'preact';
import { api } from './api/client';

function App() {
  void api;
  return <h1>Refloop</h1>;
}

const root = document.getElementById('app');
if (root) render(<App />, root);
